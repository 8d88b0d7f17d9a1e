/**
 * The words of the namespace waits' status messages: the waits (src/jobs/waits.ts, a namespace
 * that should disappear; src/jobs/path-recheck.ts, a traffic path that should be repairable again)
 * say what they saw as a typed event, and this renders it; the surface that posts it escapes it as
 * foreign text. Times arrive formatted (`08:12:00Z`, `5 min`): the wait knows its own clock.
 */

/** One state of a "namespace gone" wait. */
export type NamespaceWaitStatus =
  /** The namespace is gone. */
  | { readonly kind: "gone"; readonly namespace: string; readonly check: number }
  /** Still there at the deadline; `blockers` from {@link blockersLeftText}. */
  | {
      readonly kind: "timed-out";
      readonly namespace: string;
      readonly phase: string;
      readonly deadline: string;
      readonly blockers: string;
    }
  /** Still there; the next check is scheduled. */
  | {
      readonly kind: "waiting";
      readonly namespace: string;
      readonly phase: string;
      readonly blockers: string;
      readonly check: number;
      readonly nextAt: string;
      readonly givesUpAt: string;
    }
  /** At the deadline, and the last read of the cluster failed. */
  | {
      readonly kind: "unconfirmed";
      readonly namespace: string;
      readonly deadline: string;
      readonly message: string;
    }
  /** A read of the cluster failed; the wait tries again. */
  | {
      readonly kind: "check-failed";
      readonly namespace: string;
      readonly check: number;
      readonly message: string;
      readonly retryAt: string;
    };

export function renderNamespaceWaitStatus(e: NamespaceWaitStatus): string {
  const ns = e.namespace;
  switch (e.kind) {
    case "gone":
      return `✅ Namespace ${ns} is gone: deletion finished (confirmed on check ${String(e.check)}).`;
    case "timed-out":
      return `⌛ Namespace ${ns} is ${phaseText(e.phase)} at the deadline (${e.deadline}); ${e.blockers}.`;
    case "waiting":
      return `⏳ Namespace ${ns} is ${phaseText(e.phase)}, ${e.blockers}. (check ${String(e.check)}, next at ${e.nextAt}, gives up at ${e.givesUpAt})`;
    case "unconfirmed":
      return `⌛ Namespace ${ns}: could not confirm deletion by the deadline (${e.deadline}); last check failed: ${boundedMessage(e.message)}`;
    case "check-failed":
      return `⏳ Namespace ${ns}: check ${String(e.check)} could not read the cluster (${boundedMessage(e.message)}); retrying at ${e.retryAt}.`;
  }
}

/** `status.phase` as the status line says it. */
function phaseText(phase: string): string {
  return phase === "Terminating" ? "still Terminating" : `${phase}, not being deleted`;
}

/** An API error can quote a whole response body; the status line needs its first sentence or so. */
function boundedMessage(message: string): string {
  return message.length > 500 ? `${message.slice(0, 499)}…` : message;
}

/** The checks that follow a namespace's deletion (orphans, the traffic path) could not run. */
export function followUpsFailedText(namespace: string, message: string): string {
  return `Could not check orphans and the traffic path after ${namespace} was deleted: ${boundedMessage(message)}`;
}

/** What still blocks a namespace, as a wait's status line says it (five named at most). */
export function blockersLeftText(blockers: readonly string[]): string {
  if (blockers.length === 0) return "no blocking objects found yet (content may still be deleting)";
  // Names come from the cluster; each is bounded so five of them always fit one status line.
  const shown = blockers
    .slice(0, 5)
    .map((b) => (b.length > 300 ? `${b.slice(0, 299)}…` : b))
    .join(", ");
  const more = blockers.length > 5 ? `, and ${blockers.length - 5} more` : "";
  return `${blockers.length} blocker${blockers.length === 1 ? "" : "s"} left: ${shown}${more}`;
}

/** One state of the wait for a traffic path whose load balancers the controller re-creates. */
export type PathRecheckStatus =
  /** New load balancers: a repair can be planned (the plan follows as its own card). */
  | { readonly kind: "repairable"; readonly namespace: string }
  /** Nothing to repair any more. */
  | { readonly kind: "intact"; readonly namespace: string; readonly check: number }
  /** At the deadline, still nothing replaces the stale load balancers; `summary` is the trace's. */
  | {
      readonly kind: "no-replacement";
      readonly namespace: string;
      readonly after: string;
      readonly summary: string;
    }
  /** Not yet; the next trace is scheduled. */
  | {
      readonly kind: "waiting";
      readonly namespace: string;
      readonly summary: string;
      readonly check: number;
      readonly nextIn: string;
      readonly givesUpAfter: string;
    }
  /** At the deadline, and the last trace failed. */
  | { readonly kind: "unconfirmed"; readonly namespace: string; readonly message: string }
  /** A trace failed; the wait tries again. */
  | {
      readonly kind: "check-failed";
      readonly namespace: string;
      readonly check: number;
      readonly message: string;
      readonly retryIn: string;
    };

export function renderPathRecheckStatus(e: PathRecheckStatus): string {
  const ns = e.namespace;
  switch (e.kind) {
    case "repairable":
      return `✅ The controller has re-created load balancers for ${ns}: a repair of the traffic path can be planned now (below).`;
    case "intact":
      return `✅ The traffic path of ${ns} is intact again (check ${String(e.check)}).`;
    case "no-replacement":
      return `⌛ No load balancer replaces the stale ones of ${ns} after ${e.after}: has the namespace been re-created (Argo CD sync)? ${e.summary} To repoint by hand to an existing load balancer: /unstuck repoint <hostname> --to <load-balancer-name> --reason "…".`;
    case "waiting":
      return `⏳ Waiting for the controller to re-create the load balancers of ${ns} before planning the repair: ${e.summary} (check ${String(e.check)}, next in ${e.nextIn}, gives up after ${e.givesUpAfter})`;
    case "unconfirmed":
      return `⌛ Could not re-trace the traffic path of ${ns} by the deadline: ${e.message.slice(0, 300)}`;
    case "check-failed":
      return `⏳ Re-trace ${String(e.check)} of ${ns}'s traffic path failed (${e.message.slice(0, 300)}); retrying in ${e.retryIn}.`;
  }
}
