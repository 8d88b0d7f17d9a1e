/**
 * Forward proxies a kubeconfig's `proxy-url` can name, each recording the `host:port` of every
 * connection it made for a client: an HTTP proxy (a request for an http:// server in absolute form is
 * forwarded, an https:// one tunnelled with CONNECT) and a SOCKS5 proxy (no authentication, CONNECT).
 */
import { createServer as createHttpServer, request } from "node:http";
import {
  connect,
  createServer as createTcpServer,
  type AddressInfo,
  type Server,
  type Socket,
} from "node:net";

export interface ForwardProxy {
  /** `http://127.0.0.1:<port>` or `socks5://127.0.0.1:<port>`. */
  readonly url: string;
  /** `host:port` of every upstream connection or forwarded request, in order. */
  readonly targets: string[];
  stop(): Promise<void>;
}

/** Two sockets piped both ways, each closed with the other. */
function splice(client: Socket, upstream: Socket, sockets: Set<Socket>): void {
  sockets.add(client).add(upstream);
  const end = (): void => {
    client.destroy();
    upstream.destroy();
  };
  client.on("error", end).on("close", end);
  upstream.on("error", end).on("close", end);
}

async function listening(server: Server, scheme: string, sockets: Set<Socket>, targets: string[]) {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`,
    targets,
    stop: async (): Promise<void> => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export async function startHttpProxy(): Promise<ForwardProxy> {
  const targets: string[] = [];
  const sockets = new Set<Socket>();
  const proxy = createHttpServer((req, res) => {
    const target = new URL(req.url ?? "/");
    targets.push(target.host);
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: req.method,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  proxy.on("connect", (req, client: Socket, head: Buffer) => {
    const target = req.url ?? "";
    targets.push(target);
    const [host, port] = target.split(":");
    const upstream = connect(Number(port), host, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.write(head);
      client.pipe(upstream).pipe(client);
    });
    splice(client, upstream, sockets);
  });
  return listening(proxy, "http", sockets, targets);
}

/** The SOCKS5 CONNECT request's target, once `buf` holds all of it (RFC 1928 §4). */
function socksTarget(buf: Buffer): { host: string; port: number; length: number } | undefined {
  if (buf.length < 5) return undefined;
  const type = buf[3];
  const start = 4;
  const hostLength = type === 1 ? 4 : type === 4 ? 16 : 1 + (buf[4] ?? 0);
  const length = start + hostLength + 2;
  if (buf.length < length) return undefined;
  const raw = buf.subarray(start, start + hostLength);
  const host =
    type === 1
      ? [...raw].join(".")
      : type === 4
        ? (raw.toString("hex").match(/.{4}/g) ?? []).join(":")
        : raw.subarray(1).toString("latin1");
  return { host, port: buf.readUInt16BE(start + hostLength), length };
}

export async function startSocks5Proxy(): Promise<ForwardProxy> {
  const targets: string[] = [];
  const sockets = new Set<Socket>();
  const proxy = createTcpServer((client) => {
    sockets.add(client);
    let buf = Buffer.alloc(0);
    let greeted = false;
    const onData = (chunk: Buffer): void => {
      buf = Buffer.concat([buf, chunk]);
      if (!greeted) {
        // VER, NMETHODS, METHODS: answered "no authentication required".
        if (buf.length < 2 || buf.length < 2 + (buf[1] ?? 0)) return;
        buf = buf.subarray(2 + (buf[1] ?? 0));
        greeted = true;
        client.write(Buffer.from([5, 0]));
      }
      const target = socksTarget(buf);
      if (target === undefined) return;
      client.off("data", onData);
      targets.push(`${target.host}:${String(target.port)}`);
      const rest = buf.subarray(target.length);
      const upstream = connect(target.port, target.host, () => {
        client.write(Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
        if (rest.length > 0) upstream.write(rest);
        client.pipe(upstream).pipe(client);
      });
      splice(client, upstream, sockets);
    };
    client.on("data", onData);
    client.on("error", () => client.destroy());
  });
  return listening(proxy, "socks5", sockets, targets);
}
