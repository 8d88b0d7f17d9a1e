/**
 * One HTTP exchange with the API server, on the connection `./pool.ts` gave: Node's own client on a
 * kept agent (a direct connection), or undici's `request` on its dispatcher (through a proxy). Both
 * give the status, the headers and the raw body; `./transport.ts` decodes it.
 */
import { type Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import type { Agent as HttpsAgent } from "node:https";
import { createRequire } from "node:module";
import type { Connection } from "./pool.js";

/** Largest body read, compressed or not (a list page of 500 full objects is a few MiB). */
export const MAX_BODY_BYTES = 512 * 1024 * 1024;

export interface Exchange {
  readonly url: URL;
  readonly method: "GET" | "PATCH";
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  /** The request's deadline: it cuts off the body too. */
  readonly signal: AbortSignal;
}

export interface Answer {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

const load = createRequire(import.meta.url);

/** The exchange on `connection`; a read on a kept connection the server had just closed is sent again once. */
export async function exchange(connection: Connection, ex: Exchange): Promise<Answer> {
  if (connection.via === "undici") {
    const res = await connection.dispatcher.request({
      origin: ex.url.origin,
      path: `${ex.url.pathname}${ex.url.search}`,
      method: ex.method,
      headers: ex.headers,
      signal: ex.signal,
      ...(ex.body !== undefined ? { body: ex.body } : {}),
    });
    return {
      statusCode: res.statusCode,
      headers: res.headers,
      body: Buffer.from(await res.body.arrayBuffer()),
    };
  }
  try {
    return await viaNode(connection.agent, ex);
  } catch (err) {
    if (!(err instanceof ReusedSocketReset)) throw err;
    // Node's advice for kept connections: the server may close one just as it is reused, which
    // shows as a reset before any answer. A read is safe to send again; a write is not.
    if (ex.method !== "GET" || ex.signal.aborted) throw err.cause;
    return viaNode(connection.agent, ex).catch((again: unknown) => {
      throw again instanceof ReusedSocketReset ? again.cause : again;
    });
  }
}

/** The server (or the way to it) closed the connection mid-answer: a reset, as the error mapping reads it. */
function cutOff(): Error {
  return Object.assign(new Error("the connection closed before the answer was complete"), {
    code: "ECONNRESET",
  });
}

/** A reset of a kept connection before its answer began (the error it failed with is its cause). */
class ReusedSocketReset extends Error {}

function viaNode(agent: HttpAgent | HttpsAgent, ex: Exchange): Promise<Answer> {
  const send =
    ex.url.protocol === "https:" ? (load("node:https") as typeof import("node:https")).request : httpRequest;
  return new Promise<Answer>((resolve, reject) => {
    let answered = false;
    const req = send(ex.url, { method: ex.method, headers: ex.headers, agent, signal: ex.signal }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES)
          req.destroy(new Error(`the answer is larger than ${MAX_BODY_BYTES / 1024 / 1024} MiB`));
        else chunks.push(chunk);
      });
      res.on("end", () => {
        resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks, size) });
      });
      // Cut off mid-body: by the deadline (its reason, as undici gives it), the server or the bound.
      res.on("error", (err) => reject(ex.signal.aborted ? (ex.signal.reason as Error) : err));
      res.on("close", () => {
        if (!res.complete) reject(ex.signal.aborted ? (ex.signal.reason as Error) : cutOff());
      });
    });
    req.on("error", (err: NodeJS.ErrnoException) => {
      if (!answered && req.reusedSocket && err.code === "ECONNRESET")
        reject(new ReusedSocketReset(err.message, { cause: err }));
      else reject(answered || !ex.signal.aborted ? err : (ex.signal.reason as Error));
    });
    req.end(ex.body);
  });
}
