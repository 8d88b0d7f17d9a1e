/**
 * In a fleet a card's buttons name the cluster that produced the card: the JSON `value` of each
 * button that reads or changes a cluster (*Details*, *Check again*, *Request finalizer removal*,
 * *Fix the path*) gets `"cluster": "<name>"`, and a click is sent to that cluster. Outside a fleet
 * nothing is added, and a value without it (posted before) still works: the bot then chooses the
 * cluster as it did before. The value comes back from Slack, so the name is validated when read.
 */
import type { KnownBlock } from "@slack/types";
import { ErrorCode, UnstuckError } from "../../errors.js";
import { DiagnosisActionId, REQUEST_FINALIZE_ACTION } from "./diagnosis.js";
import type { SlackMessage } from "./message.js";
import { REPAIR_PATH_ACTION } from "./trace.js";

/** The buttons whose value names the cluster in a fleet. */
export const CLUSTER_BUTTONS: ReadonlySet<string> = new Set([
  DiagnosisActionId.Details,
  DiagnosisActionId.Recheck,
  REQUEST_FINALIZE_ACTION,
  REPAIR_PATH_ACTION,
]);

/** A cluster name as the clusters file and `--cluster` take it. */
const CLUSTER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;
/** Slack's limit on a button's value. */
const VALUE_MAX = 2000;

function stampValue(value: string, cluster: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return value;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return value;
  const stamped = JSON.stringify({ ...(parsed as Record<string, unknown>), cluster });
  // Too long for Slack: left as it was (a click then chooses the cluster as before).
  return stamped.length <= VALUE_MAX ? stamped : value;
}

/** The message with `cluster` in the value of each of its cluster buttons. */
export function withCluster(message: SlackMessage, cluster: string): SlackMessage {
  if (!CLUSTER_NAME.test(cluster)) return message;
  const blocks = message.blocks.map((block): KnownBlock => {
    if (block.type !== "actions") return block;
    return {
      ...block,
      elements: block.elements.map((el) => {
        if (el.type !== "button" || el.action_id === undefined || !CLUSTER_BUTTONS.has(el.action_id))
          return el;
        return el.value !== undefined ? { ...el, value: stampValue(el.value, cluster) } : el;
      }),
    };
  });
  return { ...message, blocks };
}

/**
 * The cluster a button's value names; `undefined` when it names none (a value posted outside a fleet
 * or before this was added). A `cluster` that is not a cluster name is refused.
 */
export function clusterOfValue(value: string | undefined): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value ?? "");
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined;
  return clusterField((parsed as Record<string, unknown>)["cluster"]);
}

/** A `cluster` field read back from Slack (a button's value, a form's metadata), validated. */
export function clusterField(raw: unknown): string | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== "string" || !CLUSTER_NAME.test(raw)) {
    throw new UnstuckError(ErrorCode.BadInput, "This button names no valid cluster.");
  }
  return raw;
}
