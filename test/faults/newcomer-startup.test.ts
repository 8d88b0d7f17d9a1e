/**
 * Start-up for a newcomer (docs/design.md, Newcomers), the real entry point as a process: half a Slack
 * configuration is an error naming what is missing (the sandbox starts only when no Slack variable
 * is set); the sandbox honours REDIS_URL and, when nothing answers there, starts its own
 * redis-server on a free loopback port, or says in one line how to get one — no ioredis stack trace.
 */
import { spawn } from "node:child_process";
import { dirname } from "node:path";
import { describe, expect, it } from "vitest";
import { eventually } from "../helpers/eventually.js";
import { REDIS_URL } from "../helpers/redis.js";
import { ensureSandboxRedis, redisAnswers } from "../sim/sandbox-redis.js";
import { freePort, runMain } from "./helpers.js";

function runSandbox(
  env: Record<string, string>,
  script: string,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out, err }));
    child.stdin.end(script);
  });
}

describe("a half-configured Slack environment", () => {
  it("only SLACK_BOT_TOKEN set: exits 2 naming SLACK_SIGNING_SECRET, no sandbox", async () => {
    const run = runMain({ SLACK_BOT_TOKEN: "xoxb-half-configured" });
    const { code } = await run.exited;
    expect(code).toBe(2);
    expect(run.stderr().trim().split("\n")).toEqual([
      "unstuck: Slack is partly configured: SLACK_BOT_TOKEN is set, but SLACK_SIGNING_SECRET (or SLACK_APP_TOKEN for Socket Mode) is missing. Set the missing variables, or unset all Slack variables to run the local sandbox.",
    ]);
    expect(run.stdout()).not.toContain("sandbox");
  });

  it("only SLACK_SIGNING_SECRET set: names SLACK_BOT_TOKEN", async () => {
    const run = runMain({ SLACK_SIGNING_SECRET: "s3cret" });
    expect((await run.exited).code).toBe(2);
    expect(run.stderr()).toContain("SLACK_SIGNING_SECRET is set, but SLACK_BOT_TOKEN is missing.");
    expect(run.stderr()).not.toContain("s3cret");
  });
});

describe("the sandbox's Redis", () => {
  it("REDIS_URL pointing at nothing: starts its own redis-server on a free loopback port and runs", async () => {
    const port = await freePort();
    const { code, out, err } = await runSandbox(
      { REDIS_URL: `redis://127.0.0.1:${String(port)}` },
      "/unstuck ns myapp\nquit\n",
    );
    const all = `${out}\n${err}`;
    expect(code).toBe(0);
    const started = /started redis-server on 127\.0\.0\.1:(\d+) for this sandbox/.exec(all);
    expect(started).not.toBeNull();
    expect(all).toContain(`no Redis answers at redis://127.0.0.1:${String(port)}`);
    expect(all).toContain("== Namespace myapp");
    expect(all).not.toMatch(/ioredis|Unhandled error event|\n\s+at /);
    // Stopped with the sandbox.
    expect(await redisAnswers(`redis://127.0.0.1:${started?.[1] ?? "0"}`, 500)).toBe(false);
  }, 90_000);

  it("a sandbox killed outright takes its own redis-server with it", async () => {
    const port = await freePort();
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        REDIS_URL: `redis://127.0.0.1:${String(port)}`,
      },
      // Standard input left open: the sandbox waits for commands until it is killed.
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    const exited = new Promise((resolve) => child.once("exit", resolve));
    try {
      const own = await eventually(
        () => /started redis-server on 127\.0\.0\.1:(\d+) for this sandbox/.exec(out)?.[1],
        60_000,
        "the sandbox started its own redis-server",
      );
      const ownUrl = `redis://127.0.0.1:${own}`;
      expect(await redisAnswers(ownUrl, 500)).toBe(true);
      // No exit hook runs on SIGKILL: only what ties the server to its parent can stop it.
      child.kill("SIGKILL");
      await exited;
      await eventually(
        async () => ((await redisAnswers(ownUrl, 500)) ? undefined : true),
        10_000,
        "its redis-server gone",
      );
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  }, 90_000);

  it("no Redis and no redis-server on PATH: one line saying how to get one, exit 2", async () => {
    const port = await freePort();
    const { code, out, err } = await runSandbox(
      // Only node's own directory: no redis-server to start.
      { REDIS_URL: `redis://127.0.0.1:${String(port)}`, PATH: dirname(process.execPath) },
      "quit\n",
    );
    expect(code).toBe(2);
    const lines = out.trim().split("\n");
    expect(lines[lines.length - 1]).toBe(
      `unstuck sandbox: no Redis answers at redis://127.0.0.1:${String(port)} and \`redis-server\` could not be started; install it (e.g. apt-get install redis-server) or set REDIS_URL to a running Redis.`,
    );
    expect(`${out}\n${err}`).not.toMatch(/ioredis|Unhandled error event|\n\s+at /);
  }, 30_000);

  it("uses the Redis REDIS_URL names when it answers, starting nothing", async () => {
    const lines: string[] = [];
    const redis = await ensureSandboxRedis(REDIS_URL, (l) => lines.push(l), "/nonexistent");
    expect(redis?.url).toBe(REDIS_URL);
    expect(redis?.own).toBe(false);
    expect(lines).toEqual([]);
    await redis?.stop();
  });
});
