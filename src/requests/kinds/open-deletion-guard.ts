/**
 * Opening the deletion guard of one namespace for a window: the bot signs the annotation the
 * admission policy requires and takes it off when the window ends. Its executor is
 * `src/actions/deletion-guard.ts`.
 */
import { code, Mark, safe } from "../../slack/blocks/text.js";
import type { ActionKind, ActionOf } from "../kind.js";
import { DELETION_APPROVED_ANNOTATION } from "../model.js";
import { minutes } from "./words.js";

export const openDeletionGuard: ActionKind<ActionOf<"open-deletion-guard">> = {
  target: (a) => `deletion guard of namespace ${a.namespace}`,
  change: (a) =>
    `allow deleting namespace ${a.namespace} for ${String(Math.round(a.windowSeconds / 60))} min (preflight: ${a.preflight.verdict})`,
  subject: (a) => `deletion-guard/${a.namespace}`,
  audit: (a, target) => ({
    type: a.type,
    target,
    plan: [
      `set annotation ${DELETION_APPROVED_ANNOTATION}=<request id> on namespace ${a.namespace} (uid ${a.precondition.uid}, resourceVersion ${a.precondition.resourceVersion}) for ${String(a.windowSeconds)} s`,
    ],
  }),
  filed: (a, filer) => ({ ...a, windowSeconds: filer.deletionWindowSeconds }),
  // Nothing derived to compare: one namespace as it was read, and a window of at most a day.
  wellFormed: (a) =>
    /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(a.namespace) &&
    a.precondition.uid !== "" &&
    a.precondition.resourceVersion !== "" &&
    Number.isInteger(a.windowSeconds) &&
    a.windowSeconds > 0 &&
    a.windowSeconds <= 86_400,
  terminal: {
    what: (a) =>
      `allow deleting namespace ${a.namespace} for ${String(Math.round(a.windowSeconds / 60))} min`,
    exact: (a) => [
      `bound to namespace uid ${a.precondition.uid}, resourceVersion ${a.precondition.resourceVersion}; preflight ${a.preflight.verdict}: ${a.preflight.summary}`,
    ],
  },
  card: {
    header: (a) => `allow deleting namespace ${a.namespace}`,
    changes: (a) => `allow deleting namespace \`${code(a.namespace)}\` for ${minutes(a.windowSeconds)} min`,
    why: (a) =>
      `preflight says *${safe(a.preflight.verdict.toUpperCase(), 10)}*: ${safe(a.preflight.summary.replace(/\s*\n\s*/g, " "), 600)}`,
    leaves: () => "nothing: the bot takes the annotation off again when the window ends",
    risks: () => [],
    risk: (a) =>
      `*Risk* — preflight ${Mark.verdict(a.preflight.verdict)} *${safe(a.preflight.verdict.toUpperCase(), 10)}*: ${safe(a.preflight.summary, 600)}\nFor ${minutes(a.windowSeconds)} min anyone with delete rights may delete namespace \`${code(a.namespace)}\` and everything in it.`,
    exact: (a, requestId) =>
      [
        `*Change*: set \`${code(DELETION_APPROVED_ANNOTATION)}\` on namespace \`${code(a.namespace)}\` to a value signed by the bot that names request \`${code(requestId)}\` and the end of the window (\`v1;req=…;until=…;mac=…\`), which the deletion guard (the chart's ValidatingAdmissionPolicy) requires before anyone may delete it; the bot takes it off again after ${minutes(a.windowSeconds)} min, and every worker removes it within seconds of the window's end even if that job is lost.`,
        `Bound to the namespace as it was when requested: uid \`${code(a.precondition.uid, 40)}\`, resourceVersion \`${code(a.precondition.resourceVersion, 40)}\`, not Terminating. If it was re-created or changed, the executor refuses (STALE).`,
      ].join("\n"),
    holds: (a) => `namespace ${safe(a.namespace)}`,
    withoutForm: "",
  },
  timeline: "opening of the",
  lessons: () => [],
  followedBy: () => null,
};
