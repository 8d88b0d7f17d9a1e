/**
 * Redis for the local sandbox: the one `REDIS_URL` names (default `redis://127.0.0.1:6379`) when it
 * answers; otherwise a private `redis-server` on a free loopback port, in memory only, stopped with
 * the sandbox; and when there is no `redis-server` either, one line saying how to get one — never a
 * client's stack trace.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { Redis } from "ioredis";

export interface SandboxRedis {
  readonly url: string;
  /** Whether the sandbox started this server itself (and stops it in `stop`). */
  readonly own: boolean;
  stop(): Promise<void>;
}

/** One PING with no retries and no unhandled `error` event (which ioredis would print). */
export async function redisAnswers(url: string, timeoutMs = 2_000): Promise<boolean> {
  const probe = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: timeoutMs,
    enableOfflineQueue: false,
  });
  probe.on("error", () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

function freeLoopbackPort(): Promise<number> {
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

/** The hint when nothing answers and no server can be started. */
export function redisHint(url: string): string {
  return (
    `unstuck sandbox: no Redis answers at ${redactUrl(url)} and \`redis-server\` could not be started; ` +
    "install it (e.g. apt-get install redis-server) or set REDIS_URL to a running Redis."
  );
}

/** A URL without its password, for messages. */
function redactUrl(url: string): string {
  return url.replace(/\/\/([^@/]*)@/, "//***@");
}

/**
 * The Redis the sandbox uses, or `undefined` after `out` has said in one line why there is none.
 * `command` is the server binary (tests point it at one that does not exist).
 */
export async function ensureSandboxRedis(
  url: string,
  out: (line: string) => void,
  command = "redis-server",
): Promise<SandboxRedis | undefined> {
  if (await redisAnswers(url)) return { url, own: false, stop: () => Promise.resolve() };
  const port = await freeLoopbackPort();
  let child: ChildProcess;
  try {
    child = spawn(
      command,
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      { stdio: "ignore" },
    );
  } catch {
    out(redisHint(url));
    return undefined;
  }
  const failed = new Promise<boolean>((resolve) => {
    child.once("error", () => resolve(true));
    child.once("exit", () => resolve(true));
  });
  const own = `redis://127.0.0.1:${String(port)}`;
  const deadline = Date.now() + 10_000;
  let up = false;
  let gone = false;
  void failed.then(() => (gone = true));
  while (!gone && Date.now() < deadline) {
    if (await redisAnswers(own, 500)) {
      up = true;
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!up) {
    if (!gone) child.kill("SIGTERM");
    out(redisHint(url));
    return undefined;
  }
  // A sandbox ended any other way must not leave its server behind.
  const reap = (): void => {
    child.kill("SIGTERM");
  };
  process.once("exit", reap);
  out(
    `unstuck sandbox: no Redis answers at ${redactUrl(url)}; started redis-server on 127.0.0.1:${String(port)} for this sandbox (in memory, stopped with it).`,
  );
  return {
    url: own,
    own: true,
    stop: () =>
      new Promise<void>((resolve) => {
        process.removeListener("exit", reap);
        if (child.exitCode !== null || child.signalCode !== null) {
          resolve();
          return;
        }
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
