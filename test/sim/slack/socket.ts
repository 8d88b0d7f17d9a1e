/**
 * The Socket Mode side of the fake Slack: a minimal WebSocket server (RFC 6455, text frames, ping/pong, close)
 * on the fake's own HTTP server, reached through the URL that `apps.connections.open` hands out. Slack's
 * protocol on top of it: the server greets a new connection with `{"type":"hello",…}`, then pushes envelopes
 * (`{"envelope_id","type","payload","accepts_response_payload"}`) and the app answers each with
 * `{"envelope_id","payload"?}`. Hand-rolled so the fake needs no WebSocket dependency of its own.
 */
import { createHash, randomUUID } from "node:crypto";
import type { EventEmitter } from "node:events";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import {
  blockActionsBody,
  slashCommandBody,
  type BlockActionFields,
  type SlashCommandFields,
} from "./signing.js";

/** One acknowledgement the app sent back over the socket. */
export interface SocketAck {
  readonly envelopeId: string;
  /** The ack's `payload` (Bolt sends `{}` for a bare `ack()`), if any. */
  readonly payload?: unknown;
  /** The whole message as sent. */
  readonly message: Record<string, unknown>;
}

/** An envelope as Slack pushes it over a Socket Mode connection. */
export interface SocketEnvelope {
  readonly envelope_id: string;
  readonly type: string;
  readonly payload: Record<string, unknown>;
  readonly accepts_response_payload?: boolean;
  readonly retry_attempt?: number;
  readonly retry_reason?: string;
}

/** A `slash_commands` envelope carrying the same fields Slack would post over HTTP, as a JSON object. */
export function slashCommandEnvelope(envelopeId: string, fields: SlashCommandFields): SocketEnvelope {
  const payload: Record<string, unknown> = Object.fromEntries(new URLSearchParams(slashCommandBody(fields)));
  return { envelope_id: envelopeId, type: "slash_commands", payload, accepts_response_payload: true };
}

/**
 * An `interactive` envelope (a button click): over Socket Mode Slack sends the same `block_actions`
 * payload it would post over HTTP, as the envelope's JSON `payload` rather than a form field.
 */
export function interactiveEnvelope(envelopeId: string, fields: BlockActionFields): SocketEnvelope {
  const payload = JSON.parse(new URLSearchParams(blockActionsBody(fields)).get("payload") ?? "{}") as Record<
    string,
    unknown
  >;
  return { envelope_id: envelopeId, type: "interactive", payload, accepts_response_payload: false };
}

const WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const OP_CONTINUATION = 0x0;
const OP_TEXT = 0x1;
const OP_BINARY = 0x2;
const OP_CLOSE = 0x8;
const OP_PING = 0x9;
const OP_PONG = 0xa;

export interface SocketHub {
  /** A fresh single-use ticket URL for `apps.connections.open`. */
  issueUrl(origin: string): string;
  /** Handle an HTTP upgrade on the fake's server; refuses unknown paths and tickets. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Send an envelope to every open connection; throws when none is open. */
  send(message: unknown): void;
  /** Open connections (hello sent, not closed). */
  open(): number;
  /** Tell every connection to go away, as Slack does before recycling a host (`{"type":"disconnect"}`). */
  disconnectAll(reason: string): void;
  acks(): SocketAck[];
  clearAcks(): void;
  /** Drop every connection at once (for `stop()`). */
  destroyAll(): void;
}

/** `events` gets `"ack"` (a {@link SocketAck}) and `"socket-open"` / `"socket-close"`. */
export function createSocketHub(appId: string, events: EventEmitter): SocketHub {
  const tickets = new Set<string>();
  const connections = new Set<Connection>();
  const acks: SocketAck[] = [];

  const onMessage = (text: string): void => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return;
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return;
    const message = parsed as Record<string, unknown>;
    const envelopeId = message["envelope_id"];
    if (typeof envelopeId !== "string") return;
    const ack: SocketAck = {
      envelopeId,
      ...("payload" in message ? { payload: message["payload"] } : {}),
      message,
    };
    acks.push(ack);
    events.emit("ack", ack);
  };

  return {
    issueUrl(origin) {
      const ticket = randomUUID();
      tickets.add(ticket);
      return `${origin.replace(/^http/, "ws")}/link/?ticket=${ticket}&app_id=${appId}`;
    },
    upgrade(req, socket, head) {
      const url = new URL(req.url ?? "/", "http://fake");
      const ticket = url.searchParams.get("ticket") ?? "";
      const key = req.headers["sec-websocket-key"];
      if (url.pathname !== "/link/" || !tickets.delete(ticket) || typeof key !== "string") {
        socket.end("HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
        return;
      }
      const accept = createHash("sha1").update(`${key}${WS_GUID}`).digest("base64");
      socket.write(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
          `Sec-WebSocket-Accept: ${accept}\r\n\r\n`,
      );
      const connection = new Connection(socket, onMessage, () => {
        connections.delete(connection);
        events.emit("socket-close");
      });
      connections.add(connection);
      if (head.length > 0) connection.receive(head);
      connection.sendText(
        JSON.stringify({
          type: "hello",
          num_connections: connections.size,
          debug_info: { host: "applink-fake-1", build_number: 1, approximate_connection_time: 18_060 },
          connection_info: { app_id: appId },
        }),
      );
      events.emit("socket-open");
    },
    send(message) {
      const open = [...connections].filter((c) => c.isOpen());
      if (open.length === 0) throw new Error("fake Slack: no open Socket Mode connection to send to");
      const text = JSON.stringify(message);
      for (const c of open) c.sendText(text);
    },
    open: () => [...connections].filter((c) => c.isOpen()).length,
    disconnectAll(reason) {
      for (const c of connections) {
        if (c.isOpen()) {
          c.sendText(JSON.stringify({ type: "disconnect", reason, debug_info: { host: "applink-fake-1" } }));
        }
      }
    },
    acks: () => [...acks],
    clearAcks: () => {
      acks.length = 0;
    },
    destroyAll() {
      for (const c of connections) c.destroy();
      connections.clear();
    },
  };
}

/** One server-side WebSocket: parses masked client frames, answers pings and closes, sends unmasked frames. */
class Connection {
  private buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  private fragmentOpcode = 0;
  private closing = false;
  private closed = false;

  constructor(
    private readonly socket: Duplex,
    private readonly onText: (text: string) => void,
    private readonly onClose: () => void,
  ) {
    socket.on("data", (chunk: Buffer) => this.receive(chunk));
    socket.on("error", () => socket.destroy());
    socket.on("close", () => {
      if (this.closed) return;
      this.closed = true;
      this.onClose();
    });
  }

  isOpen(): boolean {
    return !this.closing && !this.closed;
  }

  sendText(text: string): void {
    this.write(OP_TEXT, Buffer.from(text, "utf8"));
  }

  destroy(): void {
    this.socket.destroy();
  }

  receive(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const frame = readFrame(this.buffer);
      if (frame === undefined) return;
      this.buffer = this.buffer.subarray(frame.size);
      this.handle(frame.fin, frame.opcode, frame.payload);
    }
  }

  private handle(fin: boolean, opcode: number, payload: Buffer): void {
    switch (opcode) {
      case OP_PING:
        this.write(OP_PONG, payload);
        return;
      case OP_PONG:
        return;
      case OP_CLOSE:
        // Echo the close (same status code) and hang up: the client's close handshake completes at once.
        if (!this.closing) this.write(OP_CLOSE, payload.subarray(0, 2));
        this.closing = true;
        this.socket.end();
        return;
      case OP_TEXT:
      case OP_BINARY:
        this.fragmentOpcode = opcode;
        this.fragments = [payload];
        break;
      case OP_CONTINUATION:
        this.fragments.push(payload);
        break;
      default:
        this.destroy();
        return;
    }
    if (!fin) return;
    const data = Buffer.concat(this.fragments);
    this.fragments = [];
    if (this.fragmentOpcode === OP_TEXT) this.onText(data.toString("utf8"));
  }

  private write(opcode: number, payload: Buffer): void {
    if (this.closed || this.socket.destroyed || !this.socket.writable) return;
    const length = payload.length;
    let header: Buffer;
    if (length < 126) {
      header = Buffer.from([0x80 | opcode, length]);
    } else if (length < 0x10000) {
      header = Buffer.alloc(4);
      header.writeUInt16BE(length, 2);
      header[1] = 126;
    } else {
      header = Buffer.alloc(10);
      header.writeBigUInt64BE(BigInt(length), 2);
      header[1] = 127;
    }
    header[0] = 0x80 | opcode;
    this.socket.write(Buffer.concat([header, payload]));
  }
}

/** One complete frame at the start of `buf`, unmasked, or `undefined` if more bytes are needed. */
function readFrame(buf: Buffer): { fin: boolean; opcode: number; payload: Buffer; size: number } | undefined {
  if (buf.length < 2) return undefined;
  const b0 = buf[0] ?? 0;
  const b1 = buf[1] ?? 0;
  let offset = 2;
  let length = b1 & 0x7f;
  if (length === 126) {
    if (buf.length < 4) return undefined;
    length = buf.readUInt16BE(2);
    offset = 4;
  } else if (length === 127) {
    if (buf.length < 10) return undefined;
    length = Number(buf.readBigUInt64BE(2));
    offset = 10;
  }
  const masked = (b1 & 0x80) !== 0;
  const maskOffset = offset;
  if (masked) offset += 4;
  if (buf.length < offset + length) return undefined;
  const payload = Buffer.from(buf.subarray(offset, offset + length));
  if (masked) {
    for (let i = 0; i < payload.length; i += 1) {
      payload[i] = (payload[i] ?? 0) ^ (buf[maskOffset + (i % 4)] ?? 0);
    }
  }
  return { fin: (b0 & 0x80) !== 0, opcode: b0 & 0x0f, payload, size: offset + length };
}
