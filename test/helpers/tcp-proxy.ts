/**
 * A TCP proxy in front of a simulator: a test counts the connections a client opens through it, or
 * cuts one off at a chosen moment, without the client knowing it is there.
 */
import { connect, createServer, type AddressInfo, type Socket } from "node:net";

export interface TcpProxy {
  /** `http://127.0.0.1:<port>`: the address to give the client in place of the target's. */
  readonly url: string;
  /** Connections accepted so far (settable, to count from a point). */
  connections: number;
  close(): Promise<void>;
}

export interface TcpProxyOptions {
  /**
   * Called once per connection; the function it returns sees each chunk the client sends and
   * answers `true` to reset the connection instead of forwarding that chunk.
   */
  readonly cut?: () => (chunk: Buffer) => boolean;
  /**
   * Called once per connection; the function it returns sees each chunk the client sends and answers
   * `true` to forward that chunk and then cut the connection when the target answers, so the target
   * acts on what was sent and the client never hears its answer.
   */
  readonly loseAnswer?: () => (chunk: Buffer) => boolean;
}

export async function startTcpProxy(target: string, options: TcpProxyOptions = {}): Promise<TcpProxy> {
  const to = new URL(target);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    proxy.connections++;
    const upstream = connect(Number(to.port), to.hostname);
    sockets.add(client).add(upstream);
    const cut = options.cut?.();
    const lose = options.loseAnswer?.();
    let losing = false;
    if (cut === undefined && lose === undefined) client.pipe(upstream);
    else
      client.on("data", (chunk: Buffer) => {
        if (cut?.(chunk) === true) {
          client.resetAndDestroy();
          upstream.destroy();
          return;
        }
        if (lose?.(chunk) === true) losing = true;
        upstream.write(chunk);
      });
    if (lose === undefined) upstream.pipe(client);
    else
      upstream.on("data", (chunk: Buffer) => {
        if (!losing) client.write(chunk);
        else {
          client.resetAndDestroy();
          upstream.destroy();
        }
      });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("close", end).on("error", end);
    upstream.on("close", end).on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const proxy: TcpProxy = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: 0,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return proxy;
}

/** `target` (e.g. a `redis://` address with its password and database) with the proxy's host and port. */
export function viaProxy(target: string, proxy: TcpProxy): string {
  const url = new URL(target);
  url.host = new URL(proxy.url).host;
  return url.toString();
}
