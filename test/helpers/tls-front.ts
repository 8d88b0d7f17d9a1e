/**
 * An HTTPS front for a plain-HTTP server, as a cluster's API server is reached in production: a
 * private CA and a certificate for 127.0.0.1 (./certificates.ts), every request forwarded to
 * `upstream` as it came. The CA's PEM is what a kubeconfig's `certificate-authority-data` carries.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { request } from "node:http";
import { createServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeServerCertificate } from "./certificates.js";

export interface TlsFront {
  /** `https://127.0.0.1:<port>`. */
  readonly url: string;
  /** The private CA's certificate (PEM) that signed the front's. */
  readonly ca: string;
  /** Requests forwarded so far. */
  readonly forwarded: () => number;
  stop(): Promise<void>;
}

export async function startTlsFront(upstream: string): Promise<TlsFront> {
  const dir = await mkdtemp(join(tmpdir(), "unstuck-tls-front-"));
  try {
    const files = makeServerCertificate(dir, "unstuck-test-cluster-ca");
    const ca = await readFile(files.caFile, "utf8");
    const key = await readFile(files.keyFile, "utf8");
    const cert = await readFile(files.certFile, "utf8");
    const target = new URL(upstream);
    let forwarded = 0;
    const sockets = new Set<Socket>();
    const server = createServer({ key, cert }, (req, res) => {
      forwarded++;
      const up = request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      up.on("error", () => res.writeHead(502).end());
      req.pipe(up);
    });
    server.on("secureConnection", (s: Socket) => {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return {
      url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
      ca,
      forwarded: () => forwarded,
      stop: async () => {
        for (const s of sockets) s.destroy();
        await new Promise((resolve) => server.close(resolve));
      },
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
