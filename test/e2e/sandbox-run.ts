/**
 * The sandbox as `npm start` runs it without Slack credentials: `src/main.ts` in a child process
 * with an environment of PATH, HOME and the test Redis only (plus `env`), driven by a script on
 * standard input.
 */
import { spawn } from "node:child_process";
import { REDIS_URL } from "../helpers/redis.js";

/** Runs the sandbox with `script` as its input; resolves with its exit code and all it printed. */
export function runSandbox(
  script: string,
  env: Readonly<Record<string, string>> = {},
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", REDIS_URL, ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out }));
    child.stdin.end(script);
  });
}
