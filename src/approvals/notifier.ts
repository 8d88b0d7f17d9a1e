/**
 * How the engine tells the Slack layer that a request changed. The Slack layer implements it:
 * `requestUpdated` re-renders the original request message (`chat.update`) to the current state;
 * `threadReply` posts a line in that message's thread for a {@link ThreadEvent} (a vote, a cancel,
 * an expiry, an outcome). The engine says what happened; the words and the markup are the surface's.
 *
 * Messages converge: an implementation retries a failed edit (honouring the platform's `Retry-After`)
 * and paints the state stored at each attempt, never the snapshot it was handed; `retrying` below is
 * the loop it uses. In the runtime each notification is first a job in Redis (`jobs/notify.ts`), so one
 * that outlives its process's retries, or its process, is still made.
 */
import type { Logger } from "../log.js";
import type { ApprovalRequest, VoteDecision } from "../requests/model.js";

/** The state an execution ended in, as its outcome reply reports it. */
export type OutcomeState = "DONE" | "STALE" | "FAILED" | "TAMPERED";

/**
 * What a thread reply reports. Plain data (it travels as JSON through the durable notify queue):
 * user ids, counts and the outcome's own sentence, never markup.
 */
export type ThreadEvent =
  /** A vote was counted; `tally` while the request still waits for more approvals. */
  | {
      readonly kind: "vote";
      readonly voter: string;
      readonly decision: VoteDecision;
      readonly tally?: { readonly approvals: number; readonly required: number };
      /** Why, in the voter's words, from the signed vote (never from the job). */
      readonly reason?: string;
    }
  /** The requester cancelled the request. */
  | { readonly kind: "cancelled"; readonly by: string }
  /** The request expired without enough approvals. */
  | { readonly kind: "expired" }
  /** The execution ended (or the sweep gave up on it): its state and its result's message. */
  | { readonly kind: "outcome"; readonly state: OutcomeState; readonly message: string };

export interface ApprovalNotifier {
  requestUpdated(request: ApprovalRequest): Promise<void>;
  threadReply(request: ApprovalRequest, event: ThreadEvent): Promise<void>;
}

/**
 * Tell the notifier, but never let a Slack failure undo or hide a transition that already
 * happened in Redis: the state is the truth, the message is a view of it. The message edit and the
 * thread reply are independent: a failed (or slow, rate-limited) edit never holds back or skips the
 * reply that reports an outcome.
 */
export async function notifySafely(
  notifier: ApprovalNotifier | undefined,
  log: Logger | undefined,
  request: ApprovalRequest,
  reply?: ThreadEvent,
): Promise<void> {
  if (!notifier) return;
  const guard = (what: string, work: () => Promise<void>): Promise<void> =>
    work().catch((err: unknown) => {
      log?.warn({ err, requestId: request.id }, `could not ${what} for a request`);
    });
  await Promise.all([
    guard("update the Slack message", () => notifier.requestUpdated(request)),
    reply !== undefined
      ? guard("post the thread reply", () => notifier.threadReply(request, reply))
      : Promise.resolve(),
  ]);
}

/** After a failed attempt: give up, or try again after `afterMs` (or the policy's backoff). */
export type RetryVerdict =
  { readonly retry: false } | { readonly retry: true; readonly afterMs?: number; readonly why: string };

export interface RetryPolicy {
  /** Attempts in all, the first included (default 6). */
  readonly attempts?: number;
  /** First backoff; doubles per attempt, with jitter (default 500 ms). */
  readonly baseDelayMs?: number;
  /** Longest backoff between attempts when the platform names none (default 10 s). */
  readonly maxDelayMs?: number;
  /**
   * Total time the loop may spend waiting (default 60 s). A `Retry-After` longer than what is left
   * ends the loop rather than retrying early: the platform's word wins over our impatience.
   */
  readonly budgetMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly random?: () => number;
}

const defaultSleep = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    setTimeout(resolve, ms).unref();
  });

/**
 * Run `attempt` until it succeeds, `classify` says the failure is permanent, or the policy runs out;
 * then rethrow the last error. `attempt` gets its 1-based number and should re-read whatever it
 * paints, so a retry never sends what was current when the first attempt started.
 */
export async function retrying<T>(
  attempt: (n: number) => Promise<T>,
  classify: (err: unknown) => RetryVerdict,
  policy: RetryPolicy = {},
  onRetry?: (info: { attempt: number; waitMs: number; why: string; err: unknown }) => void,
): Promise<T> {
  const attempts = policy.attempts ?? 6;
  const base = policy.baseDelayMs ?? 500;
  const max = policy.maxDelayMs ?? 10_000;
  const sleep = policy.sleep ?? defaultSleep;
  const random = policy.random ?? Math.random;
  let budget = policy.budgetMs ?? 60_000;
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      const verdict = classify(err);
      if (!verdict.retry || n >= attempts) throw err;
      const backoff = Math.min(max, base * 2 ** (n - 1)) * (0.5 + random() / 2);
      const waitMs = Math.ceil(verdict.afterMs ?? backoff);
      if (waitMs > budget) throw err;
      budget -= waitMs;
      onRetry?.({ attempt: n, waitMs, why: verdict.why, err });
      await sleep(waitMs);
    }
  }
}
