/**
 * The bot's warm-up, run once at start before it listens (so before it reports ready): the first
 * command after start-up otherwise pays for everything used for the first time — the HTTP client's
 * parser compiled, the Kubernetes adapter built, discovery read and its watches opened, the command,
 * diagnosis and card code compiled — about half a second of CPU on the one event loop that also
 * acknowledges every other command of the first burst. Read-only: discovery and one namespace read.
 * Bounded, and never fatal: a warm-up that fails or takes too long leaves that work to the first
 * command, as before.
 */
import { createHmac } from "node:crypto";
import type { CommandDispatcher, CommandServices } from "../command-contract.js";
import type { Logger } from "../log.js";
import { orElse } from "../util/deadline.js";

export interface WarmUpDeps {
  readonly registry: CommandDispatcher;
  readonly services: CommandServices;
  /** The slash command's name (`unstuck`), as the registry's prefix. */
  readonly command: string;
  /** Renders a diagnosis as the slash command's answer does, to compile that path too. */
  readonly render: (result: Awaited<ReturnType<CommandDispatcher["dispatch"]>>) => unknown;
  readonly log: Logger;
  /** Longest the start waits for it (default 5 s); the rest goes on in the background. */
  readonly timeoutMs?: number;
}

/** A namespace every cluster has: reading it is one GET, whatever state it is in. */
export const WARM_UP_NAMESPACE = "default";

/** Warm the command path once; resolves when done, failed or timed out (never rejects). */
export async function warmUp(d: WarmUpDeps): Promise<void> {
  const started = Date.now();
  const work = (async () => {
    // Discovery first: the long-running adapter caches it (and watches CRDs for changes), so the
    // first diagnosis starts with it in hand.
    await d.services.kube.discover();
    // Without the approval engine, so nothing is recorded: the warm-up is no one's question and
    // must not appear in an incident's timeline.
    const readOnly: CommandServices = { ...d.services };
    delete (readOnly as { approvals?: unknown }).approvals;
    const result = await d.registry.dispatch(
      `ns ${WARM_UP_NAMESPACE}`,
      { actor: { userId: "unstuck-warm-up", teamId: "", surface: "cli" }, services: readOnly },
      d.command,
    );
    d.render(result);
  })();
  try {
    const outcome = await orElse(
      work.then(() => "done" as const),
      d.timeoutMs ?? 5_000,
      () => "timeout" as const,
    );
    d.log.debug({ outcome, ms: Date.now() - started }, "warm-up");
  } catch (err) {
    d.log.debug({ err: err instanceof Error ? err.message : String(err) }, "warm-up failed");
  } finally {
    work.catch(() => undefined);
  }
}

/** The action id of the warm-up's click: no listener takes it, so it is acknowledged and ignored. */
export const WARM_UP_ACTION = "unstuck:warm-up";

/**
 * Warm the acknowledgement path once the app listens (HTTP mode): one signed click on no button, sent
 * to the bot itself, runs what every request of the first burst runs before its ack — the server's
 * parser, the body read, the signature's HMAC, the payload parse, the middleware — so that the first
 * burst does not pay its first-time costs (about 70 ms of CPU in a first-burst profile) between reads
 * of its own requests. Nothing is answered in Slack: an action no listener takes is acked and
 * ignored. Bounded (1 s) and never fatal: resolves with the HTTP status, or `undefined` if it failed.
 */
export async function warmAckPath(d: {
  readonly port: number;
  readonly path: string;
  readonly signingSecret: string;
  readonly log: Logger;
}): Promise<number | undefined> {
  const payload = {
    type: "block_actions",
    user: { id: "USLACKBOT", team_id: "" },
    team: { id: "" },
    actions: [{ type: "button", action_id: WARM_UP_ACTION, block_id: "warm-up", value: "" }],
  };
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const ts = Math.floor(Date.now() / 1000).toString();
  const signature = `v0=${createHmac("sha256", d.signingSecret).update(`v0:${ts}:${body}`).digest("hex")}`;
  try {
    const res = await fetch(`http://127.0.0.1:${String(d.port)}${d.path}`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-slack-request-timestamp": ts,
        "x-slack-signature": signature,
      },
      body,
      signal: AbortSignal.timeout(1_000),
    });
    await res.arrayBuffer();
    d.log.debug({ status: res.status }, "ack path warmed");
    return res.status;
  } catch (err) {
    d.log.debug({ err: err instanceof Error ? err.message : String(err) }, "ack path warm-up failed");
    return undefined;
  }
}
