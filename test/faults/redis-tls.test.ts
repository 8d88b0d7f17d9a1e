/**
 * Redis over TLS with AUTH, as a managed Redis (ElastiCache with in-transit encryption) or the chart's
 * own Redis serves it: a real `redis-server` with a TLS port, a certificate signed by a private CA made
 * here with openssl, and `requirepass`. The real entry point, as a process, starts on
 * `rediss://:<password>@…` with `REDIS_TLS_CA_FILE`; without the CA it refuses in one line naming Redis
 * and the certificate problem; the password never appears in what it prints.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../helpers/eventually.js";
import { startKubeSim, type KubeSim } from "../sim/kube/index.js";
import { startFakeSlack, type FakeSlack } from "../sim/slack/index.js";
import { freePort, runMain, stopChild } from "./helpers.js";
import { keyEnv } from "../helpers/keys.js";
import { makeServerCertificate } from "../helpers/certificates.js";

const TOKEN = "xoxb-tls-test-token";
const PASSWORD = "tls-redis-password-4f9a1c";

describe("Redis over TLS with AUTH", () => {
  let dir: string;
  let server: ChildProcess;
  let port: number;
  let fake: FakeSlack;
  let sim: KubeSim;
  let base: Record<string, string>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "unstuck-redis-tls-"));
    // A private CA and a server certificate for 127.0.0.1 signed by it.
    makeServerCertificate(dir);

    port = await freePort();
    server = spawn(
      "redis-server",
      [
        "--port",
        "0",
        "--bind",
        "127.0.0.1",
        "--tls-port",
        String(port),
        "--tls-cert-file",
        join(dir, "srv.crt"),
        "--tls-key-file",
        join(dir, "srv.key"),
        "--tls-ca-cert-file",
        join(dir, "ca.crt"),
        "--tls-auth-clients",
        "no",
        "--requirepass",
        PASSWORD,
        "--dir",
        dir,
        "--appendonly",
        "yes",
        "--maxmemory-policy",
        "noeviction",
      ],
      { stdio: "ignore" },
    );
    const ca = join(dir, "ca.crt");
    const { readFileSync } = await import("node:fs");
    await eventually(
      async () => {
        const probe = new Redis(`rediss://:${PASSWORD}@127.0.0.1:${String(port)}`, {
          tls: { ca: readFileSync(ca, "utf8") },
          lazyConnect: true,
          retryStrategy: () => null,
          maxRetriesPerRequest: 0,
        });
        probe.on("error", () => undefined);
        try {
          await probe.connect();
          return (await probe.ping()) === "PONG" ? true : undefined;
        } catch {
          return undefined;
        } finally {
          probe.disconnect();
        }
      },
      10_000,
      `TLS redis-server on ${String(port)}`,
    );

    fake = await startFakeSlack({ token: TOKEN });
    sim = await startKubeSim({ scenario: "test/fixtures/scenarios/seed-incident.yaml" });
    const kubeconfig = join(dir, "kubeconfig");
    await sim.writeKubeconfig(kubeconfig);
    base = {
      SLACK_BOT_TOKEN: TOKEN,
      SLACK_SIGNING_SECRET: "tls-signing-secret",
      SLACK_API_URL: fake.url,
      KUBECONFIG: kubeconfig,
      PORT: "0",
      ...keyEnv(),
      UNSTUCK_STARTUP_TIMEOUT_SECONDS: "5",
      UNSTUCK_SHUTDOWN_TIMEOUT_SECONDS: "5",
      UNSTUCK_REDIS_PREFIX: `unstuck-tls-${String(process.pid)}`,
      REDIS_URL: `rediss://:${PASSWORD}@127.0.0.1:${String(port)}`,
    };
  });
  afterAll(async () => {
    await fake.stop();
    await sim.stop();
    await stopChild(server);
    await rm(dir, { recursive: true, force: true });
  });

  it("starts on rediss:// with AUTH when REDIS_TLS_CA_FILE names the CA, and stops on SIGTERM", async () => {
    const run = runMain({ ...base, REDIS_TLS_CA_FILE: join(dir, "ca.crt") });
    try {
      await eventually(
        () => (run.stdout().includes("unstuck is running") ? true : undefined),
        30_000,
        "bot running over TLS",
      );
    } finally {
      run.child.kill("SIGTERM");
    }
    const { code } = await run.exited;
    expect(code).toBe(0);
    expect(run.stdout() + run.stderr()).not.toContain(PASSWORD);
  });

  it("refuses in one line naming Redis and the certificate when the CA is not trusted", async () => {
    const run = runMain(base);
    const { code } = await run.exited;
    expect(code).not.toBe(0);
    const lines = run.stderr().trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`Redis at 127.0.0.1:${String(port)}`);
    expect(lines[0]).toMatch(/certificate/i);
    expect(run.stderr()).not.toContain(PASSWORD);
  });

  it("refuses in one line when the password is wrong, without printing either password", async () => {
    const run = runMain({
      ...base,
      REDIS_URL: `rediss://:not-the-password-77@127.0.0.1:${String(port)}`,
      REDIS_TLS_CA_FILE: join(dir, "ca.crt"),
    });
    const { code } = await run.exited;
    expect(code).not.toBe(0);
    const lines = run.stderr().trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`Redis at 127.0.0.1:${String(port)}`);
    expect(lines[0]).toMatch(/WRONGPASS|password/i);
    expect(run.stderr()).not.toContain("not-the-password-77");
    expect(run.stderr()).not.toContain(PASSWORD);
  });

  it("a CA file with plain redis:// is a configuration error naming the variable; nothing connects", async () => {
    const run = runMain({
      ...base,
      REDIS_URL: `redis://127.0.0.1:${String(port)}`,
      REDIS_TLS_CA_FILE: join(dir, "ca.crt"),
    });
    const { code } = await run.exited;
    expect(code).not.toBe(0);
    expect(run.stderr()).toContain("REDIS_TLS_CA_FILE");
    expect(run.stderr()).toContain("rediss://");
  });
});
