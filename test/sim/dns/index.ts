/**
 * A DNS server on loopback (UDP and TCP on the same port) answering from the simulated AWS account,
 * so `dig @127.0.0.1 -p <port>` and Node's `dns.Resolver` see the incident's DNS: the hosted
 * zones' records with aliases resolved to the load balancer or distribution they name, and
 * NXDOMAIN for the DNS names of deleted load balancers. The wire format (RFC 1035) is small enough
 * to write here; no dependency is needed for one question per message.
 */
import { createSocket, type RemoteInfo, type Socket } from "node:dgram";
import { createServer, type Server, type Socket as TcpSocket } from "node:net";
import type { AwsWorld } from "../aws/world.js";
import { lookup, type DnsRecord, type Lookup } from "./resolve.js";

export { lookup, reach, loadBalancerAddresses, distributionAddresses } from "./resolve.js";
export type { DnsRecord, Lookup, Target } from "./resolve.js";

const TYPES: Readonly<Record<string, number>> = {
  A: 1,
  NS: 2,
  CNAME: 5,
  SOA: 6,
  MX: 15,
  TXT: 16,
  AAAA: 28,
};
const TYPE_NAMES = new Map(Object.entries(TYPES).map(([k, v]) => [v, k]));
const RCODES = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4 } as const;
/** Plain DNS over UDP without EDNS: larger answers set TC and the client retries over TCP. */
const UDP_LIMIT = 512;

/** A running DNS server. */
export interface DnsServer {
  readonly host: string;
  /** The same port for UDP and TCP. */
  readonly port: number;
  /** What a server list wants: `127.0.0.1:<port>`. */
  readonly address: string;
  stop(): Promise<void>;
}

interface Question {
  readonly id: number;
  readonly flags: number;
  readonly name: string;
  readonly qtype: number;
  /** The question section exactly as sent, echoed back (keeps the client's letter case). */
  readonly raw: Buffer;
}

class FormatError extends Error {}

function parseQuery(msg: Buffer): Question {
  if (msg.length < 12) throw new FormatError("short header");
  const id = msg.readUInt16BE(0);
  const flags = msg.readUInt16BE(2);
  if (msg.readUInt16BE(4) !== 1) throw new FormatError("one question expected");
  const labels: string[] = [];
  let off = 12;
  for (;;) {
    const len = msg[off];
    if (len === undefined) throw new FormatError("truncated name");
    off += 1;
    if (len === 0) break;
    if (len > 63) throw new FormatError("compressed or oversized label in a question");
    labels.push(msg.toString("latin1", off, off + len));
    off += len;
  }
  if (off + 4 > msg.length) throw new FormatError("truncated question");
  const qtype = msg.readUInt16BE(off);
  return { id, flags, name: labels.join(".") + ".", qtype, raw: msg.subarray(12, off + 4) };
}

function encodeName(name: string): Buffer {
  const parts = name.replace(/\.$/, "").split(".").filter(Boolean);
  return Buffer.concat([
    ...parts.map((p) => Buffer.concat([Buffer.from([p.length]), Buffer.from(p, "latin1")])),
    Buffer.from([0]),
  ]);
}

function encodeIpv6(addr: string): Buffer {
  const [head = "", tail] = addr.split("::");
  const h = head === "" ? [] : head.split(":");
  const t = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups = [...h, ...Array<string>(8 - h.length - t.length).fill("0"), ...t];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

function rdata(r: DnsRecord): Buffer | undefined {
  switch (r.type) {
    case "A":
      return Buffer.from(r.data.split(".").map(Number));
    case "AAAA":
      return encodeIpv6(r.data);
    case "CNAME":
    case "NS":
      return encodeName(r.data);
    case "MX": {
      const [pref = "0", host = "."] = r.data.split(/\s+/);
      return Buffer.concat([u16(Number(pref)), encodeName(host)]);
    }
    case "SOA": {
      const [mname = ".", rname = ".", ...nums] = r.data.split(/\s+/);
      return Buffer.concat([
        encodeName(mname),
        encodeName(rname),
        ...nums.slice(0, 5).map((n) => u32(Number(n))),
      ]);
    }
    case "TXT": {
      const bytes = Buffer.from(r.data, "utf8");
      const chunks: Buffer[] = [];
      for (let i = 0; i < bytes.length || i === 0; i += 255) {
        const c = bytes.subarray(i, i + 255);
        chunks.push(Buffer.from([c.length]), c);
      }
      return Buffer.concat(chunks);
    }
    default:
      return undefined;
  }
}

function encodeRecord(r: DnsRecord): Buffer | undefined {
  const type = TYPES[r.type];
  const data = rdata(r);
  if (type === undefined || data === undefined) return undefined;
  return Buffer.concat([encodeName(r.name), u16(type), u16(1), u32(r.ttl), u16(data.length), data]);
}

function header(q: Question, rcode: number, counts: [number, number, number], truncated = false): Buffer {
  const opcode = q.flags & 0x7800;
  const rd = q.flags & 0x0100;
  // QR, AA (we are the world's authority), RD echoed, RA so dig does not warn about recursion.
  const flags = 0x8000 | opcode | 0x0400 | (truncated ? 0x0200 : 0) | rd | 0x0080 | rcode;
  return Buffer.concat([u16(q.id), u16(flags), u16(1), u16(counts[0]), u16(counts[1]), u16(counts[2])]);
}

/** Builds the response to one query message (exported for unit tests of the wire format). */
export function answerQuery(world: AwsWorld, msg: Buffer, limit = Infinity): Buffer {
  let q: Question;
  try {
    q = parseQuery(msg);
  } catch {
    // Echo the id when there is one, so the client can match the FORMERR to its query.
    const id = msg.length >= 2 ? msg.readUInt16BE(0) : 0;
    return Buffer.concat([u16(id), u16(0x8000 | RCODES.FORMERR), u16(0), u16(0), u16(0), u16(0)]);
  }
  if ((q.flags & 0x7800) !== 0) return Buffer.concat([header(q, RCODES.NOTIMP, [0, 0, 0]), q.raw]);

  const typeName = TYPE_NAMES.get(q.qtype);
  let result: Lookup;
  try {
    result =
      typeName === undefined
        ? (() => {
            // A type we do not model: the name's existence still decides NXDOMAIN vs NODATA.
            const a = lookup(world, q.name, "A");
            return a.rcode === "NXDOMAIN" ? a : { ...a, answers: [] };
          })()
        : lookup(world, q.name, typeName);
  } catch {
    return Buffer.concat([header(q, RCODES.SERVFAIL, [0, 0, 0]), q.raw]);
  }
  const answers =
    result.rcode === "NOERROR" ? result.answers.map(encodeRecord).filter((b) => b !== undefined) : [];
  // Negative answers carry the zone's SOA in the authority section (RFC 2308), as Route 53 does.
  const soa =
    answers.length === 0 && result.zone
      ? result.zone.records.find((r) => r.type === "SOA" && r.name === result.zone?.name)
      : undefined;
  const authority = soa
    ? [
        encodeRecord({ name: soa.name, type: "SOA", ttl: soa.ttl ?? 900, data: soa.values?.[0] ?? "" }),
      ].filter((b) => b !== undefined)
    : [];
  const rcode = RCODES[result.rcode];
  const full = Buffer.concat([
    header(q, rcode, [answers.length, authority.length, 0]),
    q.raw,
    ...answers,
    ...authority,
  ]);
  if (full.length <= limit) return full;
  return Buffer.concat([header(q, rcode, [0, 0, 0], true), q.raw]);
}

/** Options for {@link startDnsServer}. */
export interface DnsServerOptions {
  /** 0 (default) picks a free port; UDP and TCP share it. */
  readonly port?: number;
}

function bindUdp(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const sock = createSocket("udp4");
    sock.once("error", reject);
    sock.bind(port, "127.0.0.1", () => {
      sock.off("error", reject);
      resolve(sock);
    });
  });
}

function listenTcp(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/** Starts the DNS server on 127.0.0.1 (UDP and TCP on one port). */
export async function startDnsServer(world: AwsWorld, options: DnsServerOptions = {}): Promise<DnsServer> {
  const open = new Set<TcpSocket>();
  const tcp = createServer((conn) => {
    open.add(conn);
    conn.on("close", () => open.delete(conn));
    // DNS over TCP: each message is preceded by its 2-byte length; one connection may carry several.
    let buf = Buffer.alloc(0);
    conn.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 2) {
        const len = buf.readUInt16BE(0);
        if (buf.length < 2 + len) break;
        const reply = answerQuery(world, buf.subarray(2, 2 + len));
        buf = buf.subarray(2 + len);
        conn.write(Buffer.concat([u16(reply.length), reply]));
      }
    });
    conn.on("error", () => {
      conn.destroy();
    });
  });

  // UDP first on the requested (or a free) port, then TCP on the same number; a free UDP port
  // can be taken for TCP, so retry a few times with a fresh one.
  let udp: Socket | undefined;
  for (let attempt = 0; attempt < 10 && udp === undefined; attempt++) {
    const candidate = await bindUdp(options.port ?? 0);
    try {
      await listenTcp(tcp, candidate.address().port);
      udp = candidate;
    } catch (err) {
      candidate.close();
      if (options.port !== undefined) throw err;
    }
  }
  if (udp === undefined) throw new Error("dns: could not bind UDP and TCP on one port");
  const sock = udp;
  sock.on("message", (msg: Buffer, rinfo: RemoteInfo) => {
    sock.send(answerQuery(world, msg, UDP_LIMIT), rinfo.port, rinfo.address);
  });
  const port = sock.address().port;
  return {
    host: "127.0.0.1",
    port,
    address: `127.0.0.1:${port}`,
    stop: async () => {
      // A client may keep its TCP connection open; stopping must not wait for it.
      for (const conn of open) conn.destroy();
      await Promise.all([
        new Promise<void>((resolve) => {
          sock.close(() => {
            resolve();
          });
        }),
        new Promise<void>((resolve) => {
          tcp.close(() => {
            resolve();
          });
        }),
      ]);
    },
  };
}
