/**
 * Shared pieces of the browser tests: Debian's Chromium driven by playwright-core, the sandbox as
 * `npm start` runs it (a child process with no Slack credentials), and the screenshot folder.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { REDIS_URL } from "../helpers/redis.js";

export const CHROMIUM = "/usr/bin/chromium";
export const ARTIFACTS = resolve("test-artifacts/browser");

export async function launchChromium(): Promise<Browser> {
  // Chromium refuses to run as root with its sandbox on; CI containers run as root.
  const root = process.getuid?.() === 0;
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: root ? ["--no-sandbox"] : [],
  });
}

/** Save a screenshot as a test artifact; returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

export interface SandboxProcess {
  readonly consoleUrl: string;
  output(): string;
  /** `quit` on standard input, then wait for the exit code. */
  stop(): Promise<number | null>;
}

/** Start the sandbox as `npm start` does from a checkout (sources through tsx), console on a free port. */
export async function startSandboxProcess(timeoutMs = 60_000): Promise<SandboxProcess> {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/root",
      REDIS_URL,
      UNSTUCK_CONSOLE_PORT: "0",
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
  const consoleUrl = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`the sandbox printed no console URL within ${String(timeoutMs)} ms:\n${out}`));
    }, timeoutMs);
    const check = (): void => {
      const m = /Or in a browser: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m?.[1] === undefined) return;
      clearTimeout(timer);
      resolveUrl(m[1]);
    };
    child.stdout.on("data", check);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`the sandbox exited before printing its console URL:\n${out}`));
    });
  });
  return {
    consoleUrl,
    output: () => out,
    stop: async () => {
      if (child.exitCode === null) child.stdin.end("quit\n");
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
