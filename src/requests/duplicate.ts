/**
 * One request per object: the refusal of a second request names the one that exists (who asked, and
 * where its message is), so the asker votes on that one instead. The engine throws it with plain
 * words and the facts in its details (`duplicateOf`); a surface that can link people and messages
 * words it again with its own renderers, from the same sentence.
 */
import type { MessageRef } from "./model.js";

/** The pending (or running) request a new one collided with: the details of the `Conflict`. */
export interface DuplicateRequest {
  /** What was asked, e.g. `A request to remove finalizers from Ingress myapp/x`. */
  readonly what: string;
  readonly requestId: string;
  /** Approved and being applied (rather than waiting for votes). */
  readonly running: boolean;
  /** Slack user id of who asked for the existing request. */
  readonly requester?: string;
  /** Where the existing request's message is. */
  readonly message?: MessageRef;
}

/** How a surface shows a person and a message in the sentence. */
export interface DuplicateWords {
  person(userId: string): string;
  message(message: MessageRef): string;
}

/** The words of the plain surfaces (the terminal, the log): the user id, the message's `channel:ts`. */
export const PLAIN_WORDS: DuplicateWords = {
  person: (userId) => userId,
  message: (m) => `its message is ${m.channel}:${m.ts};`,
};

/** The refusal's sentence, with `words` for the person and the message. */
export function duplicateRequestSentence(d: DuplicateRequest, words: DuplicateWords = PLAIN_WORDS): string {
  const by = d.requester !== undefined ? ` by ${words.person(d.requester)}` : "";
  const where = d.message !== undefined ? ` ${words.message(d.message)}` : "";
  return d.running
    ? `${d.what} is already approved and being applied (request ${d.requestId}${by});${where} its outcome will be posted in its thread.`
    : `${d.what} is already pending (request ${d.requestId}${by});${where} vote on that one, or cancel it before asking again.`;
}

/** The existing request named by an error's details (`duplicateOf`), when they hold a well-formed one. */
export function duplicateOf(details: { readonly [key: string]: unknown }): DuplicateRequest | undefined {
  const d = details["duplicateOf"];
  if (typeof d !== "object" || d === null) return undefined;
  const v = d as Record<string, unknown>;
  if (
    typeof v["what"] !== "string" ||
    typeof v["requestId"] !== "string" ||
    typeof v["running"] !== "boolean"
  ) {
    return undefined;
  }
  const m = v["message"] as Record<string, unknown> | undefined;
  const message =
    typeof m === "object" && typeof m["channel"] === "string" && typeof m["ts"] === "string"
      ? { channel: m["channel"], ts: m["ts"] }
      : undefined;
  return {
    what: v["what"],
    requestId: v["requestId"],
    running: v["running"],
    ...(typeof v["requester"] === "string" ? { requester: v["requester"] } : {}),
    ...(message !== undefined ? { message } : {}),
  };
}
