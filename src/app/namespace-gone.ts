/**
 * What follows a namespace-gone wait: while it runs, the lines naming what still blocks; once the
 * namespace is gone, the orphans its stacks left in AWS and the traffic path of every hostname that
 * reached it (and, when that path is broken with nothing to repoint to yet, the path re-check); the
 * re-trace each re-check makes; and when the wait ends, the repaint of every message posted about
 * the namespace.
 */
import { blockerLine } from "../render/diagnosis-prose.js";
import type { CommandServices } from "../command-contract.js";
import { diagnoseNamespace } from "../diagnosis/diagnose.js";
import type { RepointPlan } from "../edge/repoint.js";
import { toUserError } from "../errors.js";
import { NamespaceMessageKind, type NamespaceMessages } from "../jobs/namespace-messages.js";
import type { MessageEdit } from "../jobs/notify.js";
import type { PathRecheckRequest, Replanned } from "../jobs/path-recheck.js";
import type { DescribeBlockers, NamespaceGoneData, NamespaceGoneResult, ThreadCard } from "../jobs/waits.js";
import type { KubePort } from "../kube/port.js";
import { collectOrphans } from "../orphans/collect.js";
import {
  orphansUnavailableText,
  renderOrphansFollowUp,
  traceUnavailableText,
} from "../render/orphans-text.js";
import { planPathRepair } from "../traffic/repoint.js";
import type { TraceResult } from "../edge/trace-result.js";

/** The longest follow-up reply: a thread reply stays well inside one message. */
export const FOLLOW_UP_MAX_CHARS = 3500;

/** The traffic path as a card: what is stale now and, when a repair can be planned, the way to request it. */
export type RenderTrace = (trace: TraceResult, plan: RepointPlan) => ThreadCard;

export interface NamespaceGoneDeps {
  readonly kube: KubePort;
  readonly aws: NonNullable<CommandServices["aws"]>;
  readonly now: () => Date;
  readonly renderTrace: RenderTrace;
}

/** Lines naming what still blocks a namespace, for the wait's status message. */
export function blockerLines(kube: KubePort, now: () => Date): DescribeBlockers {
  return async (namespace) => (await diagnoseNamespace(kube, namespace, { now })).blockers.map(blockerLine);
}

export interface AfterNamespaceGoneDeps extends NamespaceGoneDeps {
  /** Adds the path re-check (the waits queue). */
  readonly enqueuePathRecheck: (request: PathRecheckRequest) => Promise<unknown>;
  /** Pause and deadline of the path re-check (tests shorten them). */
  readonly pathRecheck?: { readonly intervalMs?: number; readonly timeoutMs?: number };
}

/**
 * After a namespace is gone: the orphans its stacks left in AWS and the traffic path of every
 * hostname that reached it, as thread replies (plain text, bounded; the reporter escapes it).
 */
export function afterNamespaceGone(
  deps: AfterNamespaceGoneDeps,
): (
  namespace: string,
  thread: { readonly channel: string; readonly threadTs: string },
) => Promise<readonly (string | ThreadCard)[]> {
  const { kube, aws, now } = deps;
  const recheck = async (namespace: string, thread: { channel: string; threadTs: string }): Promise<void> => {
    await deps.enqueuePathRecheck({
      namespace,
      channel: thread.channel,
      threadTs: thread.threadTs,
      ...(deps.pathRecheck?.intervalMs !== undefined ? { intervalMs: deps.pathRecheck.intervalMs } : {}),
      ...(deps.pathRecheck?.timeoutMs !== undefined ? { timeoutMs: deps.pathRecheck.timeoutMs } : {}),
    });
  };
  return async (namespace, thread) => {
    const [orphans, trace] = await Promise.allSettled([
      collectOrphans(aws.port, kube, {
        namespace,
        ...(aws.cluster !== undefined ? { cluster: aws.cluster } : {}),
      }),
      planPathRepair(aws.port, kube, { namespace }, now, {
        ...(aws.cluster !== undefined ? { cluster: aws.cluster } : {}),
      }),
    ]);
    const out: (string | ThreadCard)[] = [];
    out.push(
      orphans.status === "fulfilled"
        ? bounded(renderOrphansFollowUp(orphans.value, "deletion"))
        : orphansUnavailableText(toUserError(orphans.reason).message),
    );
    if (trace.status === "rejected") {
      out.push(traceUnavailableText(toUserError(trace.reason).message));
      return out;
    }
    // The traffic path as a card: what is stale now and, when a repair can be planned, the way to request it.
    out.push(deps.renderTrace(trace.value.trace, trace.value.plan));
    const broken = trace.value.trace.paths.some((p) => p.verdict === "stale" || p.verdict === "mismatched");
    // Nothing to repoint to yet: watch for the controller to re-create the stack, then offer the repair.
    if (broken && trace.value.plan.action === undefined) await recheck(namespace, thread);
    return out;
  };
}

/** One re-trace for the path re-check wait: repairable (a plan exists), intact, or still waiting. */
export function replanNamespace(deps: NamespaceGoneDeps): (namespace: string) => Promise<Replanned> {
  const { kube, aws, now } = deps;
  return async (namespace) => {
    const { trace, plan } = await planPathRepair(aws.port, kube, { namespace }, now, {
      ...(aws.cluster !== undefined ? { cluster: aws.cluster } : {}),
    });
    const broken = trace.paths.filter((p) => p.verdict === "stale" || p.verdict === "mismatched");
    const card = deps.renderTrace(trace, plan);
    // The stack is back: check orphans again (docs/incident.md, step 11), now new and old are told apart.
    const followUps = async (): Promise<readonly string[]> => {
      const report = await collectOrphans(aws.port, kube, {
        namespace,
        ...(aws.cluster !== undefined ? { cluster: aws.cluster } : {}),
      });
      return [bounded(renderOrphansFollowUp(report, "re-creation"))];
    };
    if (broken.length === 0) return { state: "intact", summary: "no stale link", card, followUps };
    if (plan.action)
      return {
        state: "repairable",
        summary: `${String(plan.action.steps.length)} change(s) planned`,
        card,
        followUps,
      };
    return {
      state: "waiting",
      summary: `${broken.map((p) => p.hostname).join(", ")} still stale, nothing to repoint to yet.`,
      card,
    };
  };
}

/** A message as its final state shows it: fallback text and its blocks. */
/** Queues one edit of a posted message, once per message and `key` (what it becomes): the durable notify queue. */
export type QueueEdit = (edit: MessageEdit, key: string) => Promise<void>;

export interface RepaintDeps {
  readonly messages: Pick<NamespaceMessages, "list" | "forget">;
  readonly queueEdit: QueueEdit;
  readonly now: () => Date;
}

/**
 * The namespace's wait ended: repaint what was posted about it (durably, on the notify queue), each
 * message's final form named by ids — the namespace, the outcome, which message — never by its words.
 */
export function repaintWhenFinished(
  deps: RepaintDeps,
): (data: NamespaceGoneData, result: NamespaceGoneResult) => Promise<void> {
  return async (data, result) => {
    const at = deps.now().toISOString();
    const repainted = [];
    for (const m of await deps.messages.list(data.cluster, data.namespace)) {
      // At the deadline the namespace is still stuck: its diagnosis cards stay as they are.
      if (result.outcome === "timed-out" && m.kind === NamespaceMessageKind.Diagnosis) continue;
      await deps.queueEdit(
        { kind: "namespace-final", cluster: data.cluster, message: m, outcome: result.outcome, at },
        `${m.kind}:${result.outcome}`,
      );
      repainted.push(m);
    }
    await deps.messages.forget(data.cluster, data.namespace, repainted);
  };
}

/** A follow-up reply bounded to {@link FOLLOW_UP_MAX_CHARS}. */
function bounded(text: string): string {
  return text.length > FOLLOW_UP_MAX_CHARS ? `${text.slice(0, FOLLOW_UP_MAX_CHARS - 1)}…` : text;
}
