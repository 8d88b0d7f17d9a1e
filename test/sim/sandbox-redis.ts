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

/**
 * Runs the server (`$@`) and stops it when standard input closes, which is when the process that
 * started it ends or calls `stop`; exits with the server's status, so a server that cannot start
 * (no such binary, a taken port) ends the shell too.
 */
const BOUND_TO_PARENT = [
  "exec 3<&0",
  '"$@" & server=$!',
  '{ while read -r _ <&3; do :; done; kill "$server" 2>/dev/null; } & watcher=$!',
  'wait "$server"; status=$?',
  'kill "$watcher" 2>/dev/null',
  'exit "$status"',
].join("\n");

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
    // In memory only: nothing of a sandbox outlives it.
    const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
    // Through a shell that holds our end of a pipe: whenever this process ends (a return, a signal,
    // SIGKILL, a crash before the server answered), the pipe closes and the shell stops the server.
    child = spawn("/bin/sh", ["-c", BOUND_TO_PARENT, "sandbox-redis", command, ...args], {
      stdio: ["pipe", "ignore", "ignore"],
    });
  } catch {
    out(redisHint(url));
    return undefined;
  }
  child.stdin?.on("error", () => undefined);
  const gone = new Promise<void>((resolve) => {
    child.once("error", () => resolve());
    child.once("exit", () => resolve());
  });
  let ended = false;
  void gone.then(() => (ended = true));
  const stop = async (): Promise<void> => {
    child.stdin?.end();
    await gone;
  };
  const own = `redis://127.0.0.1:${String(port)}`;
  const deadline = Date.now() + 10_000;
  let up = false;
  while (!ended && Date.now() < deadline) {
    if (await redisAnswers(own, 500)) {
      up = true;
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!up) {
    await stop();
    out(redisHint(url));
    return undefined;
  }
  out(
    `unstuck sandbox: no Redis answers at ${redactUrl(url)}; started redis-server on 127.0.0.1:${String(port)} for this sandbox (in memory, stopped with it).`,
  );
  return { url: own, own: true, stop };
}
