/**
 * The "Request finalizer removal" form: the target a button carries (re-validated: it went through the
 * client), and the modal that asks why, the requester's three statements (required checkboxes) and which
 * finalizer.
 */
import type { KnownBlock, View } from "@slack/types";
import { ErrorCode, UnstuckError } from "../errors.js";
import { assertNamespaceName, assertObjectName } from "../kube/names.js";
import { clip, esc } from "./blocks/text.js";
import { MIN_REASON_LENGTH } from "../approvals/reason.js";
import { REQUESTER_STATEMENTS, RequesterStatementId, type RequesterStatement } from "../requests/model.js";
import { clusterField } from "./blocks/cluster-value.js";

/** Callback id of the "Request finalizer removal" modal. */
export const FINALIZE_SUBMIT_CALLBACK = "finalize:submit";
/** Block and action ids of the modal's inputs (`view.state.values[block][action]`). */
export const FinalizeModalField = {
  Reason: "reason",
  Finalizer: "finalizer",
  /** The three required checkboxes: block id = action id = option value = the statement's id. */
  CauseConfirmed: RequesterStatementId.CauseConfirmed,
  RecoveryFirst: RequesterStatementId.RecoveryFirst,
  CleanupPlan: RequesterStatementId.CleanupPlan,
} as const;

/** `view.state.values` as Bolt types it: block id → action id → the element's state. */
type ViewValues = Readonly<
  Record<
    string,
    Readonly<
      Record<
        string,
        { readonly selected_options?: readonly { readonly value?: string }[] | null } | undefined
      >
    >
  >
>;

/**
 * The statements the requester ticked, in the form's words, and the ones left unticked (by block id).
 * A statement counts only when its own checkbox carries its own value: a crafted submission that moves
 * options between blocks confirms nothing.
 */
export function parseStatements(values: ViewValues): {
  readonly statements: readonly RequesterStatement[];
  readonly missing: readonly RequesterStatementId[];
} {
  const statements: RequesterStatement[] = [];
  const missing: RequesterStatementId[] = [];
  for (const known of REQUESTER_STATEMENTS) {
    const selected = values[known.id]?.[known.id]?.selected_options ?? [];
    if (selected.some((o) => o.value === known.id)) statements.push({ id: known.id, text: known.text });
    else missing.push(known.id);
  }
  return { statements, missing };
}
// ---------------------------------------------------------------------------------------------------------
// Targets carried by buttons and modals
// ---------------------------------------------------------------------------------------------------------

/** The object a "Request finalizer removal" button names. Client-supplied until validated. */
export interface RemovalTarget {
  readonly resource: string;
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

const RESOURCE = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const API_VERSION = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?v[0-9]+([a-z]+[0-9]+)?$/;
const KIND = /^[A-Z][A-Za-z0-9]*$/;
/** A qualified name as Kubernetes validates finalizers: optional DNS prefix, e.g. `foregroundDeletion`, `ingress.k8s.aws/resources`. */
const FINALIZER = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
export const CHANNEL_ID = /^[CGD][A-Z0-9]{2,}$/;

export function badTarget(what: string): UnstuckError {
  return new UnstuckError(
    ErrorCode.BadInput,
    `This button does not name a valid object (${what}); run \`/unstuck ns <namespace>\` again and use the new message.`,
  );
}

/** Validate a target from a button value or modal metadata; throws `BadInput`/`InvalidName`. */
export function parseRemovalTarget(raw: unknown): RemovalTarget {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw badTarget("not an object");
  const r = raw as Record<string, unknown>;
  const field = (key: string, pattern: RegExp, max: number): string => {
    const v = r[key];
    if (typeof v !== "string" || v.length === 0 || v.length > max || !pattern.test(v)) throw badTarget(key);
    return v;
  };
  const resource = field("resource", RESOURCE, 253);
  const apiVersion = field("apiVersion", API_VERSION, 253);
  const kind = field("kind", KIND, 63);
  const namespace = r["namespace"];
  const name = r["name"];
  if (typeof namespace !== "string" || typeof name !== "string") throw badTarget("namespace/name");
  return {
    resource,
    apiVersion,
    kind,
    namespace: assertNamespaceName(namespace),
    name: assertObjectName(name),
  };
}

/** Validate an optional finalizer name typed into the modal; `undefined` means "all of them". */
export function parseFinalizer(raw: string | null | undefined): string | undefined {
  const value = (raw ?? "").trim();
  if (value.length === 0) return undefined;
  if (value.length > 316 || !FINALIZER.test(value)) {
    throw new UnstuckError(
      ErrorCode.BadInput,
      `"${value.slice(0, 80)}" is not a finalizer name (e.g. ingress.k8s.aws/resources). Leave it empty to remove all of them.`,
    );
  }
  return value;
}

export interface ModalMetadata {
  readonly target: RemovalTarget;
  readonly channelId: string;
  /** In a fleet: the cluster of the card whose button opened the form. */
  readonly cluster?: string;
}

/** Parse and re-validate the modal's `private_metadata` (it went through Slack and back). */
export function parseModalMetadata(raw: string): ModalMetadata {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw badTarget("unreadable form metadata");
  }
  if (typeof parsed !== "object" || parsed === null) throw badTarget("form metadata");
  const m = parsed as Record<string, unknown>;
  const channelId = m["channelId"];
  if (typeof channelId !== "string" || !CHANNEL_ID.test(channelId)) throw badTarget("channel");
  const cluster = clusterField(m["cluster"]);
  return {
    target: parseRemovalTarget(m["target"]),
    channelId,
    ...(cluster !== undefined ? { cluster } : {}),
  };
}

/** The modal that asks why (required), the three statements (each required) and which finalizer (optional). */
export function finalizeModal(target: RemovalTarget, channelId: string, cluster?: string): View {
  const metadata: ModalMetadata = { target, channelId, ...(cluster !== undefined ? { cluster } : {}) };
  const blocks: KnownBlock[] = [
    {
      type: "section",
      text: {
        type: "mrkdwn",
        text: clip(
          `Ask for approval to remove a finalizer from *${esc(target.kind)} \`${esc(target.namespace)}/${esc(target.name)}\`* (${esc(target.apiVersion)}).\n` +
            `Someone else on the approver list must approve it in <#${channelId}>. The change is bound to the object as it is now and is not applied if the object changes meanwhile.`,
        ),
      },
    },
    {
      type: "input",
      block_id: FinalizeModalField.Reason,
      label: { type: "plain_text", text: "Why does recovery come first?" },
      hint: {
        type: "plain_text",
        text: "What is down and why the clean-up can follow. Shown to approvers with the statements below and kept in the audit log.",
      },
      element: {
        type: "plain_text_input",
        action_id: FinalizeModalField.Reason,
        multiline: true,
        min_length: MIN_REASON_LENGTH,
        max_length: 2000,
      },
    },
    // Required, one checkbox each: the requester states the three conditions; approvers see them as theirs.
    ...REQUESTER_STATEMENTS.map((st): KnownBlock => ({
      type: "input",
      block_id: st.id,
      label: { type: "plain_text", text: st.label },
      element: {
        type: "checkboxes",
        action_id: st.id,
        options: [{ text: { type: "plain_text", text: st.text }, value: st.id }],
      },
    })),
    {
      type: "input",
      block_id: FinalizeModalField.Finalizer,
      optional: true,
      label: { type: "plain_text", text: "Which finalizer" },
      hint: { type: "plain_text", text: "Leave empty to remove all finalizers the object has now." },
      element: {
        type: "plain_text_input",
        action_id: FinalizeModalField.Finalizer,
        placeholder: { type: "plain_text", text: "e.g. ingress.k8s.aws/resources" },
        max_length: 316,
      },
    },
  ];
  return {
    type: "modal",
    callback_id: FINALIZE_SUBMIT_CALLBACK,
    private_metadata: JSON.stringify(metadata),
    title: { type: "plain_text", text: "Remove a finalizer" },
    submit: { type: "plain_text", text: "Request approval" },
    close: { type: "plain_text", text: "Cancel" },
    blocks,
  };
}
