/**
 * How the terminal writes a `--json` answer (`writePieces`, src/cli.ts): each piece is made once the
 * stream has taken the one before, and a stream that closes ends the writing instead of leaving it
 * waiting. The built CLI's own run through a slow pipe is in test/integration/cli.
 */
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { writePieces } from "../../../src/cli.js";

/** A stream that takes a write only on a later turn, as a pipe whose reader is slow. */
function slowStream(received: string[]): Writable {
  return new Writable({
    highWaterMark: 64,
    decodeStrings: false,
    write(chunk: string, _encoding, done) {
      received.push(chunk);
      setTimeout(done, 1);
    },
  });
}

describe("writePieces", () => {
  it("makes each piece only once the stream has taken the last, and writes them all", async () => {
    const received: string[] = [];
    const stream = slowStream(received);
    let mostQueued = 0;
    function* pieces(): Generator<string> {
      for (let i = 0; i < 50; i++) {
        mostQueued = Math.max(mostQueued, stream.writableLength);
        yield `${"x".repeat(40)}${String(i)},`;
      }
    }
    await writePieces(stream, pieces());
    await new Promise<void>((resolve) => stream.end(resolve));
    const expected = Array.from({ length: 50 }, (_, i) => `${"x".repeat(40)}${String(i)},`).join("");
    expect(received.join("")).toBe(`${expected}\n`);
    // Never more than the stream's own buffer and one piece waiting.
    expect(mostQueued).toBeLessThanOrEqual(64 + 42);
  });

  it("stops when the stream closes while it waits, rather than waiting for ever", async () => {
    // A reader that takes nothing, then goes away (`| head` closing its end).
    const stream = new Writable({ highWaterMark: 64, decodeStrings: false, write: () => undefined });
    stream.on("error", () => undefined);
    let made = 0;
    function* pieces(): Generator<string> {
      for (let i = 0; i < 1000; i++) {
        made++;
        yield "y".repeat(100);
      }
    }
    const writing = writePieces(stream, pieces());
    setTimeout(() => stream.destroy(), 20);
    await writing;
    // The first piece filled the stream; nothing more was made for it.
    expect(made).toBe(1);
  });
});
