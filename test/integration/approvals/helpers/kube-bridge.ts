/**
 * Serves a `KubePort` over HTTP and builds a `KubePort` client for it, so a worker in a child
 * process talks to the same (fake) cluster as the test, and the test can count what reached it.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { ErrorCode, UnstuckError, isUnstuckError, type ErrorDetails } from "../../../../src/errors.js";
import type { KubePort } from "../../../../src/kube/port.js";

type Callable = (...args: unknown[]) => Promise<unknown>;

export async function serveKubePort(port: KubePort): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const { method, args } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        method: keyof KubePort;
        args: unknown[];
      };
      const fn = (port[method] as Callable).bind(port);
      fn(...args).then(
        (result) => {
          res
            .writeHead(200, { "content-type": "application/json" })
            .end(JSON.stringify({ result: result ?? null }));
        },
        (err: unknown) => {
          const body = isUnstuckError(err)
            ? { code: err.code, message: err.message, details: err.details }
            : { code: ErrorCode.Internal, message: String(err), details: {} };
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ error: body }));
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port: tcp } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${tcp}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function httpKubePort(url: string): KubePort {
  const call = async (method: string, args: unknown[]): Promise<unknown> => {
    const res = await fetch(url, { method: "POST", body: JSON.stringify({ method, args }) });
    const body = (await res.json()) as {
      result?: unknown;
      error?: { code: ErrorCode; message: string; details: ErrorDetails };
    };
    if (body.error) throw new UnstuckError(body.error.code, body.error.message, body.error.details);
    return body.result;
  };
  return new Proxy({} as KubePort, {
    get:
      (_t, method: string) =>
      (...args: unknown[]) =>
        call(method, args),
  });
}
