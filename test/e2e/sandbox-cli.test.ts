/**
 * The sandbox shows what Slack would, and shares its data with the terminal CLI: run as `npm start`
 * runs it without credentials (a child process, driven on standard input kept open), it prints its
 * Redis URL and key prefix and writes `.sandbox/cli.env`; `npm run unstuck -- timeline` with that file
 * reads the same audit log; the post-mortem file `timeline` uploads is listed in the terminal and
 * downloadable from the browser console; `trace --probe` answers through the world's DNS and HTTP
 * front; a wait's status edits are printed once per state; Ctrl-C (SIGINT) removes its keys.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { readFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { client, REDIS_URL } from "../helpers/redis.js";
import { eventually, pause } from "../helpers/eventually.js";

const running: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const c of running.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
});

function start(): { child: ChildProcessWithoutNullStreams; out: () => string } {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", REDIS_URL },
    stdio: ["pipe", "pipe", "pipe"],
  });
  running.push(child);
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  return { child, out: () => out };
}

/** `export K="v"` lines → an environment. */
function parseEnv(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const m of text.matchAll(/^export ([A-Z0-9_]+)=(".*")$/gm)) {
    if (m[1] !== undefined && m[2] !== undefined) env[m[1]] = JSON.parse(m[2]) as string;
  }
  return env;
}

function cli(args: readonly string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, ["--import", "tsx", "src/cli.ts", ...args], {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", ...env },
    });
    let out = "";
    c.stdout.on("data", (d: Buffer) => (out += d.toString()));
    c.stderr.on("data", (d: Buffer) => (out += d.toString()));
    c.on("error", reject);
    c.on("close", () => resolve(out));
  });
}

describe("the sandbox and the terminal CLI", () => {
  it("prints its Redis and prefix, the CLI reads the same audit, uploads are listed and downloadable, --probe works, Ctrl-C cleans up", async () => {
    const { child, out } = start();
    const prefix = await eventually(
      () => /key prefix (unstuck-sandbox-[0-9a-f]+)/.exec(out())?.[1],
      60_000,
      "the prefix line",
    );
    expect(out()).toContain(`Redis:    ${REDIS_URL}`);
    const envFile = await eventually(
      () => /source (\S+cli\.env) && npm run unstuck -- timeline/.exec(out())?.[1],
      5_000,
      "cli.env",
    );
    const consoleUrl = await eventually(
      () => /Or in a browser: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out())?.[1],
      5_000,
      "console",
    );

    child.stdin.write(
      [
        '/unstuck finalize ingress/myapp-worker-ingress -n myapp --reason "cause confirmed: ENI holds the SG; recovery first"',
        "as U0APPROVER1",
        "click Approve",
        "wait Namespace myapp is gone",
        "wait Waiting for the controller",
        "/unstuck trace test.example.com --probe",
        "wait Probed now",
        "/unstuck timeline",
        "wait uploaded a file",
        "",
      ].join("\n"),
    );
    await eventually(
      () =>
        /uploaded a file in #incident \(thread\): postmortem-[\d-]+\.md \([\d,]+ bytes\)/.test(out())
          ? true
          : undefined,
      90_000,
      "the upload listed",
    );
    // trace --probe goes through the same probe the waits use: the world's DNS and HTTP front.
    expect(out()).not.toContain("needs DNS and HTTP access");
    expect(out()).toMatch(/test\.example\.com\* — DNS addresses [\d.]+/);
    // The path re-check edits its status every few seconds: the terminal shows it once.
    await pause(4_000);
    expect(out().split("Waiting for the controller to re-create").length - 1).toBe(1);

    // The file, from the browser console's API (as its download link fetches it).
    const state = (await (await fetch(`${consoleUrl}api/state`)).json()) as {
      messages: { files?: { id: string; name: string; size: number }[] }[];
    };
    const file = state.messages.flatMap((m) => m.files ?? [])[0];
    expect(file?.name).toMatch(/^postmortem-.*\.md$/);
    const download = await fetch(`${consoleUrl}api/file/${file?.id ?? ""}`);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-disposition")).toContain("attachment");
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(bytes.length).toBe(file?.size);
    expect(bytes.toString("utf8")).toContain(
      "Removed [ingress.k8s.aws/resources] from Ingress myapp/myapp-worker-ingress",
    );

    // The terminal CLI with the sandbox's settings reads the same audit log.
    const env = parseEnv(await readFile(envFile, "utf8"));
    expect(env["UNSTUCK_REDIS_PREFIX"]).toBe(prefix);
    const timeline = await cli(["timeline"], env);
    expect(timeline).toContain("Removed [ingress.k8s.aws/resources] from Ingress myapp/myapp-worker-ingress");
    expect(await cli(["audit"], env)).toContain("execution.done");

    // Ctrl-C: the sandbox stops as `quit` does, and its keys are gone.
    const redis = client();
    try {
      expect((await redis.keys(`${prefix}:*`)).length).toBeGreaterThan(0);
      const closed = new Promise<number | null>((r) => child.on("close", r));
      child.kill("SIGINT");
      expect(await closed).toBe(0);
      expect(await redis.keys(`${prefix}:*`)).toEqual([]);
    } finally {
      await redis.quit();
    }
  }, 180_000);
});
