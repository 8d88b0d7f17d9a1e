/**
 * Helpers for the fault tests: free ports, a private redis-server (destructive tests never touch
 * the shared Redis), and the real entry point run as a child process.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { Redis } from "ioredis";
import { eventually } from "../helpers/eventually.js";

/** A TCP port nothing listens on (bound once by us, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

export interface PrivateRedis {
  readonly port: number;
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * A throw-away `redis-server` on its own port with the given extra arguments; `port` restarts one
 * on the port a stopped one used.
 */
export async function startPrivateRedis(args: readonly string[], port?: number): Promise<PrivateRedis> {
  // A restart on a port something still holds would answer from that other server while this one
  // exits: the test would then stop the wrong one and leave the other running after the suite.
  if (port !== undefined && !(await portIsFree(port))) {
    throw new Error(
      `port ${String(port)} is still taken: stop the redis-server on it before starting another`,
    );
  }
  port ??= await freePort();
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", ...args], {
    stdio: "ignore",
  });
  const url = `redis://127.0.0.1:${String(port)}`;
  await eventually(
    async () => {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`redis-server on ${String(port)} exited before it answered`);
      }
      const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
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
    `redis-server on ${String(port)}`,
  );
  return {
    port,
    url,
    stop: () => stopChild(child),
  };
}

export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

export interface MainRun {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or the signal name) when the process ends. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; elapsedMs: number }>;
}

/** `src/main.ts` with exactly this environment (plus PATH/HOME), as `npm start` would run it. */
export function runMain(env: Record<string, string>): MainRun {
  const started = Date.now();
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (c: Buffer) => (out += c.toString("utf8")));
  child.stderr?.on("data", (c: Buffer) => (err += c.toString("utf8")));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; elapsedMs: number }>(
    (resolve) => {
      child.once("exit", (code, signal) => resolve({ code, signal, elapsedMs: Date.now() - started }));
    },
  );
  return { child, stdout: () => out, stderr: () => err, exited };
}
