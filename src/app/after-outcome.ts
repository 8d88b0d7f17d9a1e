/**
 * What follows an approved change once the executor made it: the wait its kind asks for
 * (`followedBy` in the action-kind table) — the namespace-gone wait after a finalizer removal (or a
 * pointer to the wait already running), the edge waits after a repair. Started from the executor's
 * outcome, in the request's thread.
 */
import type { RepointApplied } from "../actions/repoint-path.js";
import type { OutcomeState, ThreadEvent } from "../approvals/notifier.js";
import { actionKind } from "../requests/action-kinds.js";
import type { FollowUp } from "../requests/kind.js";
import type { ApprovalRequest } from "../requests/model.js";
import type { EdgeWaitRequest, EdgeWaitTarget } from "../jobs/edge-waits.js";
import { postKey, type PostLedger } from "../jobs/post-once.js";
import type { KubePort } from "../kube/port.js";
import { runningThread, type PostedMessage, type StartNamespaceWait } from "./namespace-wait.js";

/**
 * The deadline of a repaired hostname's HTTP wait when the repair changed a CloudFront
 * distribution: the names answer only once CloudFront has deployed, so they get CloudFront's deadline.
 */
export const HTTP_WAIT_AFTER_CLOUDFRONT_MS = 50 * 60_000;

/** Between the first checks of the waits a repair starts, so their status messages come in order. */
const WAIT_STAGGER_MS = 300;

export interface AfterOutcomeDeps {
  readonly kube: Pick<KubePort, "getNamespace">;
  readonly startWait: StartNamespaceWait;
  /** Adds one edge wait (the waits queue; a duplicate joins the running one). */
  readonly enqueueEdgeWait: (request: EdgeWaitRequest) => Promise<unknown>;
  /** Records each reply under its key, so an outcome handled again posts nothing twice. */
  readonly posted: PostLedger;
  /**
   * The surface's reply in `thread`: the namespace is already watched, its progress and result are
   * in `running`'s thread.
   */
  readonly replyAlreadyWatched: (
    thread: PostedMessage,
    namespace: string,
    running: PostedMessage,
  ) => Promise<{ readonly ts?: string } | undefined>;
  readonly cluster: string;
  /** Paths probed on each repaired hostname (`UNSTUCK_HEALTH_PATHS`). */
  readonly healthPaths: readonly string[];
  /**
   * Resolves once the request's outcome reply is in its thread (bounded; it never throws): the waits'
   * status messages then come below the outcome they follow. Absent: the waits start at once.
   */
  readonly replyDelivered?: (requestId: string, event: ThreadEvent) => Promise<void>;
  /** Pauses of the edge waits (tests shorten them; production uses each kind's default). */
  readonly edgeWaits?: { readonly intervalMs?: number; readonly maxIntervalMs?: number };
  /**
   * A repair made: the traffic-path card it was asked from loses its *Fix the path* (durably; a
   * request asked by command has no card). Absent: the card is left as it is.
   */
  readonly repaintRepairCard?: (request: ApprovalRequest) => Promise<void>;
}

/** The wait of one kind of follow-up, once the outcome reply is in the thread. */
type Wait<F extends FollowUp> = (
  deps: AfterOutcomeDeps,
  request: ApprovalRequest,
  followUp: F,
  thread: PostedMessage,
  applied: RepointApplied | undefined,
) => Promise<void>;

/** How each kind of follow-up is waited for, typed over every kind of wait. */
const WAITS: { readonly [W in FollowUp["wait"]]: Wait<Extract<FollowUp, { readonly wait: W }>> } = {
  "namespace-gone": waitForNamespace,
  edge: waitForTheEdge,
};

/** What to watch once an approved change is made. */
export function afterOutcome(
  deps: AfterOutcomeDeps,
): (request: ApprovalRequest, applied?: RepointApplied) => Promise<void> {
  return async (request, applied) => {
    const thread = request.message;
    if (thread === undefined) return;
    const followUp = actionKind(request.action).followedBy(request.action);
    if (followUp === null) return;
    // The outcome ("Removed…", "Repointed…") first, then what is waited for, in that order.
    if (deps.replyDelivered !== undefined && request.result !== undefined && isOutcome(request.state)) {
      await deps.replyDelivered(request.id, {
        kind: "outcome",
        state: request.state,
        message: request.result.message,
      });
    }
    await (WAITS[followUp.wait] as Wait<FollowUp>)(deps, request, followUp, thread, applied);
  };
}

/**
 * After a finalizer removal: an Active namespace has nothing to wait for; a Terminating one, or one
 * already gone, does (the wait then reports the result in the thread at its first check).
 */
async function waitForNamespace(
  deps: AfterOutcomeDeps,
  request: ApprovalRequest,
  { namespace }: Extract<FollowUp, { readonly wait: "namespace-gone" }>,
  thread: PostedMessage,
): Promise<void> {
  const ns = await deps.kube.getNamespace(namespace);
  if (ns === null || ns.deletionTimestamp) {
    const started = await deps.startWait(namespace, thread);
    // Another wait already reports on it: say where, instead of a second status and "gone".
    if (started.joined) {
      await deps.posted.once(postKey("wait-joined", request.id), () =>
        deps.replyAlreadyWatched(thread, namespace, runningThread(started)),
      );
    }
  }
}

/**
 * After a repair: CloudFront Deployed, Route 53 INSYNC and every repaired hostname answering — each
 * a wait with its one status message in the thread, posted by its first check and edited to its
 * result. (A mismatched target's old load balancer still exists, so its name resolving says
 * nothing: no NXDOMAIN wait here.)
 */
async function waitForTheEdge(
  deps: AfterOutcomeDeps,
  request: ApprovalRequest,
  { hostnames, zoneNames }: Extract<FollowUp, { readonly wait: "edge" }>,
  thread: PostedMessage,
  applied: RepointApplied | undefined,
): Promise<void> {
  if (request.state === "DONE") await deps.repaintRepairCard?.(request);
  const targets: EdgeWaitTarget[] = [];
  for (const c of applied?.route53Changes ?? [])
    targets.unshift({
      kind: "route53-insync",
      changeId: c.changeId,
      zoneName: zoneNames[c.zoneId] ?? c.zoneId,
    });
  for (const id of applied?.distributions ?? [])
    targets.unshift({ kind: "cloudfront-deployed", distributionId: id });
  for (const host of hostnames)
    for (const path of deps.healthPaths) targets.push({ kind: "http-ok", url: `https://${host}${path}` });
  const unique = [...new Map(targets.map((t) => [JSON.stringify(t), t])).values()];
  for (const [index, target] of unique.entries()) {
    // Once per request and target, even when this follow-up runs again (a worker died in it): a wait
    // that already ran to its end is not started a second time.
    await deps.posted.once(postKey("follow-up", request.id, JSON.stringify(target)), async () => {
      await deps.enqueueEdgeWait({
        target,
        cluster: deps.cluster,
        channel: thread.channel,
        threadTs: thread.ts,
        // Each wait posts its own status message at its first check: staggered, they come in this order.
        firstCheckInMs: index * WAIT_STAGGER_MS,
        ...(deps.edgeWaits?.intervalMs !== undefined ? { intervalMs: deps.edgeWaits.intervalMs } : {}),
        ...(deps.edgeWaits?.maxIntervalMs !== undefined
          ? { maxIntervalMs: deps.edgeWaits.maxIntervalMs }
          : {}),
        // The names answer only once CloudFront has deployed: give them CloudFront's deadline.
        ...(target.kind === "http-ok" && (applied?.distributions.length ?? 0) > 0
          ? { timeoutMs: HTTP_WAIT_AFTER_CLOUDFRONT_MS }
          : {}),
      });
      return undefined;
    });
  }
}

function isOutcome(state: string): state is OutcomeState {
  return state === "DONE" || state === "STALE" || state === "FAILED" || state === "TAMPERED";
}
