/**
 * The calls a fleet's bot sends to a cluster's workers and their answers: a worker runs only the bot's
 * call for its own cluster before it expires, and the bot reads only that cluster's workers' answer to
 * that very call.
 */
import { describe, expect, it } from "vitest";
import { openAnswer, openCall, sealAnswer, sealCall, type RemoteCall } from "../../../src/fleet/calls.js";
import {
  BOT,
  clusterOwner,
  generateKeyText,
  Keyring,
  parsePrivateKey,
  SigningKey,
  type KeyOwner,
} from "../../../src/trust/keys.js";

const key = (owner: KeyOwner) => new SigningKey(parsePrivateKey(generateKeyText().privateKey, "V"), owner);
const bot = key(BOT);
const c1 = key(clusterOwner("c1"));
const c2 = key(clusterOwner("c2"));
const keyring = new Keyring([bot, c1, c2].map((k) => ({ key: k.publicKey, owner: k.owner })));
const CALL: RemoteCall = {
  kind: "command",
  text: "finalize ingress/x -n myapp --reason because",
  actor: { userId: "U0ONCALL1", teamId: "T1", channelId: "C1", surface: "slack" },
};
const NOW = 1_800_000_000_000;

describe("remote calls", () => {
  it("a worker opens the bot's call for its cluster, unexpired", () => {
    const { envelope, sealed } = sealCall(bot, "c1", CALL, NOW, 25_000);
    const opened = openCall(keyring, "c1", sealed, NOW + 1_000);
    expect(opened).toEqual({ ok: true, envelope });
    expect(envelope.nonce).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it("refuses an unsigned call, one a worker signed, an edited one, another cluster's, an expired one", () => {
    const { sealed } = sealCall(bot, "c1", CALL, NOW, 25_000);
    const cases: [unknown, RegExp][] = [
      [{ call: CALL, deadline: NOW + 25_000 }, /not a signed call/],
      // A worker pod's own key (or any but the bot's) makes no call a worker runs.
      [
        { payload: sealed.payload, sig: c1.sign("remote-call", [sealed.payload]) },
        /not the bot's call: signed by cluster c1's workers/,
      ],
      [{ payload: sealed.payload.replace("U0ONCALL1", "U0OTHER1"), sig: sealed.sig }, /does not verify/],
    ];
    for (const [data, why] of cases) {
      const opened = openCall(keyring, "c1", data, NOW);
      expect(opened.ok).toBe(false);
      expect(!opened.ok && opened.why).toMatch(why);
    }
    expect(openCall(keyring, "c2", sealed, NOW)).toEqual({
      ok: false,
      why: "it is for cluster c1, and this worker serves c2",
    });
    expect(openCall(keyring, "c1", sealed, NOW + 25_001)).toEqual({
      ok: false,
      why: "it expired before a worker took it",
    });
    const early = sealCall(bot, "c1", CALL, NOW + 120_000, 25_000).sealed;
    expect(openCall(keyring, "c1", early, NOW)).toEqual({ ok: false, why: "it was issued in the future" });
  });

  it("the bot reads only its cluster's workers' answer to that very call", () => {
    const { envelope } = sealCall(bot, "c1", CALL, NOW, 25_000);
    const answer = { ok: true as const, value: { type: "help" } };
    const good = sealAnswer(c1, envelope, answer);
    expect(openAnswer(keyring, envelope, good)).toEqual({ ok: true, answer });
    // Another cluster's workers, an answer to another call, an edited one, a bare value: refused.
    const other = sealCall(bot, "c1", CALL, NOW, 25_000).envelope;
    expect(openAnswer(keyring, envelope, sealAnswer(c2, envelope, answer)).ok).toBe(false);
    expect(openAnswer(keyring, envelope, sealAnswer(c1, other, answer))).toEqual({
      ok: false,
      why: "the answer is to another call",
    });
    const edited = { ...good, payload: good.payload.replace("help", "diagnosis") };
    expect(openAnswer(keyring, envelope, edited).ok).toBe(false);
    expect(openAnswer(keyring, envelope, answer)).toEqual({ ok: false, why: "the answer is not signed" });
    // The bot's own key does not answer for a cluster either.
    const byBot = { payload: good.payload, sig: bot.sign("remote-answer", [good.payload]) };
    expect(openAnswer(keyring, envelope, byBot).ok).toBe(false);
  });
});
