/**
 * Removing finalizers from one object: the patch is exactly the one its precondition implies, bound
 * to the object's resourceVersion and finalizers as read. Its executor is `src/actions/finalizer.ts`.
 */
import { ObservationKind } from "../../audit/observation.js";
import { buildFinalizerPatch } from "../../kube/finalizer-patch.js";
import { code, safe } from "../../slack/blocks/text.js";
import type { ActionKind, ActionOf } from "../kind.js";
import { describeTarget } from "../model.js";
import { asPlanned, NO_EVIDENCE } from "./words.js";

export const removeFinalizer: ActionKind<ActionOf<"remove-finalizer">> = {
  target: (a) => describeTarget(a.target),
  change: (a) =>
    `remove finalizer${a.remove.length === 1 ? "" : "s"} ${a.remove.join(", ")} from ${describeTarget(a.target)}`,
  subject: (a) => `${a.target.group}/${a.target.resource}/${a.target.namespace}/${a.target.name}`,
  audit: (a, target) => ({
    type: a.type,
    target,
    object: {
      apiVersion: a.target.apiVersion,
      kind: a.target.kind,
      namespace: a.target.namespace,
      name: a.target.name,
      ...(a.target.uid !== undefined ? { uid: a.target.uid } : {}),
    },
    patch: a.patch,
  }),
  // The patch is exactly the one its precondition implies, removing only finalizers it holds.
  filed: asPlanned,
  wellFormed: (a) =>
    a.remove.every((f) => a.precondition.finalizers.includes(f)) &&
    JSON.stringify(a.patch) === JSON.stringify(buildFinalizerPatch(a.precondition, a.remove)),
  terminal: {
    what: (a) => `remove ${a.remove.join(", ")} from ${a.target.kind} ${a.target.namespace}/${a.target.name}`,
    exact: (a) => [
      `bound to resourceVersion ${a.precondition.resourceVersion}, finalizers [${a.precondition.finalizers.join(", ")}]`,
    ],
  },
  card: {
    header: (a) => `remove finalizer from ${a.target.kind} ${a.target.namespace}/${a.target.name}`,
    changes: (a) =>
      `remove ${a.remove.map((f) => `\`${code(f)}\``).join(", ")} from ${safe(a.target.kind, 63)} \`${code(`${a.target.namespace}/${a.target.name}`)}\``,
    why: (_a, first) => first ?? NO_EVIDENCE,
    leaves: (_a, first) => first ?? "nothing planned",
    risks: () => [],
    risk: (a) =>
      `*Risk*: forcing ${a.remove.map((f) => `\`${code(f)}\``).join(", ")} off skips its controller's clean-up: whatever it still had to delete (in the cluster or in AWS) is left behind until the clean-up plan runs, and *${safe(a.target.kind, 63)} \`${code(`${a.target.namespace}/${a.target.name}`)}\`* is deleted at once.`,
    exact: (a) =>
      [
        `*Change*: remove ${a.remove.map((f) => `\`${code(f)}\``).join(", ")} from *${safe(a.target.kind, 63)} \`${code(`${a.target.namespace}/${a.target.name}`)}\`* (${safe(a.target.apiVersion, 100)})`,
        `Bound to the object as it was when requested: resourceVersion \`${code(a.precondition.resourceVersion, 40)}\`, finalizers [${a.precondition.finalizers.map((f) => `\`${code(f)}\``).join(", ")}]. If either changes, the executor refuses (STALE).`,
        // Inside a code block a literal ``` would end it early; the look-alike keeps the patch readable.
        "```" +
          safe(JSON.stringify(a.patch, null, 1).replace(/\n\s*/g, " ").replace(/`/g, "ˋ"), 1500) +
          "```",
      ].join("\n"),
    holds: (a) => safe(describeTarget(a.target)),
    withoutForm:
      " (asked without the form, so cause, recovery-first and clean-up were not confirmed one by one)",
  },
  timeline: "finalizer removal on",
  lessons: (observed) => [
    "- _Prompt: when the finalizer was removed, were the cause confirmed, recovery the priority, and a clean-up plan in place?_",
    "- _Prompt: was the deletion that started this necessary, and what would have blocked it (approval, admission policy, one owner per namespace)?_",
    ...(observed(ObservationKind.OrphanCheck)
      ? []
      : [
          "- _Prompt: no orphan check is recorded after the forced removal: who checks ALB/TG/SG/ENI and old DNS names?_",
        ]),
  ],
  followedBy: (a) => ({ wait: "namespace-gone", namespace: a.target.namespace }),
};
