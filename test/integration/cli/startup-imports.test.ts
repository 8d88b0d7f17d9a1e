/**
 * Terminal start-up ≤ 1 s (docs/design.md, Performance targets): the CLI loads only what the command
 * needs. `help` loads no client at all; `ns` loads @kubernetes/client-node, and the AWS SDK only when
 * it calls AWS — never Slack, BullMQ, Redis or prom-client. Checked by the packages a real process
 * resolves (a module hook in the child), not by timing: the timing is in the benchmarks and the
 * report.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";

const run = promisify(execFile);

/**
 * Records the package of every module the process resolves, and counts the HTTP requests Node's own
 * client and undici start (their diagnostics channels); prints both on exit.
 */
const HOOK = `
import { registerHooks } from "node:module";
import { subscribe } from "node:diagnostics_channel";
const seen = new Set();
const sent = { node: 0, undici: 0 };
subscribe("http.client.request.start", () => sent.node++);
subscribe("undici:request:create", () => sent.undici++);
registerHooks({
  resolve(specifier, context, next) {
    const r = next(specifier, context);
    const m = /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(r.url);
    if (m) seen.add(m[1]);
    return r;
  },
});
process.on("exit", () => {
  process.stderr.write("LOADED " + [...seen].sort().join(",") + "\\n");
  process.stderr.write("SENT " + JSON.stringify(sent) + "\\n");
});
`;

/** The most the CLI's stdout ever held queued in the process (after each write), printed on exit. */
const QUEUE_HOOK = `
let most = 0;
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (...args) => {
  const taken = write(...args);
  most = Math.max(most, process.stdout.writableLength);
  return taken;
};
process.on("exit", () => process.stderr.write("QUEUED " + most + "\\n"));
`;

/** Held objects in the namespace whose answer outgrows a pipe's buffer. */
const WIDE = 600;

const NEVER = ["@slack/bolt", "@slack/web-api", "bullmq", "ioredis", "prom-client"];

describe("what the terminal form loads", () => {
  let sim: KubeSim;
  let dir: string;
  let hook: string;
  let queueHook: string;
  let kubeconfig: string;

  beforeAll(async () => {
    sim = await startKubeSim({ controllerIntervalMs: 3_600_000 });
    sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "plain" } });
    sim.store.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "held", namespace: "plain", finalizers: ["example.com/hold"] },
    });
    sim.store.delete("v1", "Namespace", undefined, "plain");
    // An answer bigger than a pipe's buffer (64 KiB): 600 held ConfigMaps.
    sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "wide" } });
    for (let i = 0; i < WIDE; i++)
      sim.store.create({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          name: `held-${String(i).padStart(4, "0")}`,
          namespace: "wide",
          finalizers: ["example.com/hold"],
        },
      });
    sim.store.delete("v1", "Namespace", undefined, "wide");
    await sim.reconcileNow();
    dir = await mkdtemp(join(tmpdir(), "unstuck-startup-"));
    hook = join(dir, "hook.mjs");
    kubeconfig = join(dir, "kubeconfig");
    await writeFile(hook, HOOK);
    queueHook = join(dir, "queue-hook.mjs");
    await writeFile(queueHook, QUEUE_HOOK);
    await sim.writeKubeconfig(kubeconfig);
  }, 60_000);

  afterAll(async () => {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });

  /** Runs `src/cli.ts` (through tsx) with `env` only; returns its stdout and the packages it loaded. */
  async function cli(
    args: readonly string[],
    env: Record<string, string> = {},
  ): Promise<{ out: string; err: string; loaded: string[]; sent: { node: number; undici: number } }> {
    const { stdout, stderr } = await run(
      process.execPath,
      ["--import", hook, "--import", "tsx", "src/cli.ts", ...args],
      {
        env: { PATH: process.env.PATH ?? "", HOME: dir, NODE_DISABLE_COMPILE_CACHE: "1", ...env },
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    const line = stderr.split("\n").find((l) => l.startsWith("LOADED ")) ?? "LOADED ";
    const loaded = line
      .slice("LOADED ".length)
      .split(",")
      .filter((p) => p !== "");
    const sent = stderr.split("\n").find((l) => l.startsWith("SENT ")) ?? "SENT {}";
    return {
      out: stdout,
      err: stderr,
      loaded,
      sent: JSON.parse(sent.slice("SENT ".length)) as { node: number; undici: number },
    };
  }

  it("help loads no Kubernetes, AWS, Slack, BullMQ or Redis client", async () => {
    const { out, loaded } = await cli(["help"]);
    expect(out).toContain("ns <namespace> [--all]");
    for (const p of [...NEVER, "@kubernetes/client-node"]) expect(loaded).not.toContain(p);
    expect(loaded.filter((p) => p.startsWith("@aws-sdk/"))).toEqual([]);
  }, 60_000);

  it("`<command> --help` prints that command alone, loading no client either", async () => {
    const { out, loaded } = await cli(["repoint", "--help"]);
    expect(out).toContain("repoint <hostname> [--to <load-balancer-name>]");
    expect(out).toContain("e.g. unstuck repoint test.example.com");
    expect(out).not.toContain("ns <namespace> [--all]");
    expect(loaded).not.toContain("@kubernetes/client-node");
  }, 60_000);

  it("ns loads the Kubernetes client, and the AWS SDK only when it calls AWS", async () => {
    // A region configured, but nothing in the namespace that needs AWS: the SDK stays unloaded.
    const { out, loaded } = await cli(["ns", "plain", "--json", "--kubeconfig", kubeconfig], {
      AWS_REGION: "eu-west-1",
      AWS_ENDPOINT_URL: "http://127.0.0.1:9",
      AWS_ACCESS_KEY_ID: "AKIAEXAMPLE",
      AWS_SECRET_ACCESS_KEY: "example",
    });
    const d = JSON.parse(out) as { blockers: { name: string }[] };
    expect(d.blockers.map((b) => b.name)).toEqual(["held"]);
    expect(loaded).toContain("@kubernetes/client-node");
    for (const p of NEVER) expect(loaded).not.toContain(p);
    expect(loaded.filter((p) => p.startsWith("@aws-sdk/"))).toEqual([]);
  }, 60_000);

  it("ns sends every request to a cluster it reaches directly through Node's own client, none through undici", async () => {
    // undici (its evaluation was a fifth of a cold CLI's start-up) is for a cluster behind a proxy
    // and for the bot's watches; the built terminal never evaluates it (src/kube/pool.ts).
    const { out, sent } = await cli(["ns", "plain", "--json", "--kubeconfig", kubeconfig]);
    expect((JSON.parse(out) as { blockers: { name: string }[] }).blockers.map((b) => b.name)).toEqual([
      "held",
    ]);
    expect(sent.node).toBeGreaterThanOrEqual(3);
    expect(sent.undici).toBe(0);
  }, 60_000);

  it("ns loads pino only when a log level is asked for, and then logs to stderr", async () => {
    const quiet = await cli(["ns", "plain", "--json", "--kubeconfig", kubeconfig]);
    expect(quiet.loaded).not.toContain("pino");
    expect(quiet.err.split("\n").filter((l) => l.startsWith("{"))).toEqual([]);
    // One throttled request: its retry is a debug line.
    sim.setFaults({ throttle: { count: 1, retryAfterSeconds: 0 } });
    const logged = await cli(["ns", "plain", "--json", "--kubeconfig", kubeconfig], {
      UNSTUCK_LOG_LEVEL: "debug",
    }).finally(() => sim.setFaults({}));
    expect(logged.loaded).toContain("pino");
    const lines = logged.err
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { name?: string; msg?: string; level?: string });
    expect(lines).toContainEqual(
      expect.objectContaining({
        name: "unstuck-cli",
        level: "debug",
        msg: "retrying kube request",
        verb: "get",
        object: "plain",
      }),
    );
    // The answer is the same either way, on stdout alone.
    expect((JSON.parse(logged.out) as { blockers: unknown[] }).blockers).toHaveLength(1);
  }, 60_000);

  it("--json into a pipe is one compact line, the same answer a terminal gets indented", async () => {
    const { out } = await cli(["ns", "plain", "--json", "--kubeconfig", kubeconfig]);
    expect(out.trimEnd().split("\n")).toHaveLength(1);
    const d = JSON.parse(out) as { namespace: string; blockers: { name: string }[] };
    expect(d.namespace).toBe("plain");
    expect(d.blockers.map((b) => b.name)).toEqual(["held"]);
  }, 60_000);

  it("a reader that stops early (`| head`) ends the command quietly, with its exit code", async () => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "src/cli.ts", "ns", "plain", "--json", "--kubeconfig", kubeconfig],
      {
        env: { PATH: process.env.PATH ?? "", HOME: dir },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    // The reading end closed before the answer is written: every write to it fails with EPIPE.
    child.stdout.destroy();
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
    expect(stderr).not.toMatch(/EPIPE|Unhandled|at /);
    expect(code).toBe(0);
  }, 60_000);

  it("a reader slower than the answer gets all of it, never queued whole, and the command then ends", async () => {
    // The CLI exits as soon as its answer is written (src/cli.ts): never before a slow reader has it.
    // Nor does it make the whole answer while the reader waits: a pipe takes 64 KiB and Node queues
    // the rest in memory, so each piece waits for the one before to be taken.
    const child = spawn(
      process.execPath,
      [
        "--import",
        queueHook,
        "--import",
        "tsx",
        "src/cli.ts",
        "ns",
        "wide",
        "--json",
        "--kubeconfig",
        kubeconfig,
      ],
      { env: { PATH: process.env.PATH ?? "", HOME: dir }, stdio: ["ignore", "pipe", "pipe"] },
    );
    child.stdout.pause();
    const chunks: Buffer[] = [];
    child.stdout.on("data", (d: Buffer) => chunks.push(d));
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const closed = new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
    // Nothing read until the CLI has filled the pipe and waits on it.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    child.stdout.resume();
    const code = await closed;
    const queued = /^QUEUED (\d+)\n$/.exec(stderr);
    expect(queued, stderr).not.toBeNull();
    expect(code).toBe(0);
    const out = Buffer.concat(chunks).toString("utf8");
    expect(out.length).toBeGreaterThan(4 * 64 * 1024);
    // At most about one piece (64 KiB) waiting beside what the pipe holds.
    expect(Number(queued?.[1])).toBeLessThanOrEqual(64 * 1024);
    const d = JSON.parse(out) as { blockers: { name: string }[] };
    expect(d.blockers).toHaveLength(WIDE);
    expect(d.blockers.at(-1)?.name).toBe(`held-${String(WIDE - 1).padStart(4, "0")}`);
  }, 60_000);
});
