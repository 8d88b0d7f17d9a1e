/**
 * The exchange between one process's request limiter (`./limiter.ts`) and the fleet's budget of
 * requests in flight at an API server (`./shared-budget.ts`, in Redis): which leases this process
 * holds, when it asks for more and gives them back, how it keeps them alive, and how it sets an
 * unreachable budget aside so that a Redis outage never stops a diagnosis.
 */

/**
 * A budget of requests in flight at one API server, shared by every process (see
 * `shared-budget.ts`): leases that expire unless renewed, so a process that dies gives its back.
 */
export interface SharedBudget {
  /**
   * Give back `release` and ask for up to `want` new leases, this process then holding `held`
   * (the leases it keeps). Resolves with the lease ids granted (none when the budget is spent);
   * rejects when the budget cannot be reached.
   */
  exchange(release: readonly string[], want: number, held: number): Promise<readonly string[]>;
  /** Keep the leases this process holds alive (every third of their lifetime). */
  renew(ids: readonly string[]): Promise<void>;
  /** How long a lease lives unrenewed, in ms. */
  readonly leaseMs: number;
  /** What the budget bounds (an API server), for the log. */
  readonly name: string;
}

/** What the limiter says about its budget (a logger's shape, so any logger fits). */
export interface BudgetLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/** Pauses between two asks of a spent budget: from the first to the last, doubling. */
const POLL_FIRST_MS = 5;
const POLL_LAST_MS = 100;

/** What {@link BudgetLeases} needs of its limiter (`./limiter.ts`). */
export interface BudgetLeasesOptions {
  readonly now: () => number;
  readonly log: BudgetLog | undefined;
  /** Longest wait for the budget's answer before it is set aside. */
  readonly timeoutMs: number;
  /** How long an unreachable budget is set aside before it is tried again. */
  readonly retryMs: number;
  /** How many leases the limiter could use now (requests waiting that a slot is free for). */
  readonly demand: () => number;
  /** Start what can start: leases arrived, or the budget was set aside. */
  readonly wake: () => void;
}

/**
 * This process's side of the shared budget: the leases granted and not yet given to a request,
 * those in use, those to give back; one exchange with the budget at a time, asking a spent budget
 * again after a growing pause, renewing the leases in use; and an unreachable budget set aside
 * for a while (logged once), so that only the local bound applies meanwhile.
 */
export class BudgetLeases {
  private readonly spare: string[] = [];
  private readonly inUse = new Set<string>();
  private toRelease: string[] = [];
  private asking = false;
  private pollMs = POLL_FIRST_MS;
  private pollTimer: ReturnType<typeof setTimeout> | undefined;
  private renewTimer: ReturnType<typeof setInterval> | undefined;
  private setAsideUntil = 0;
  private outage = false;
  private closed = false;

  public constructor(
    private readonly budget: SharedBudget,
    private readonly opts: BudgetLeasesOptions,
  ) {}

  /** Whether requests take leases now (not closed, not set aside). */
  public usable(): boolean {
    return !this.closed && this.opts.now() >= this.setAsideUntil;
  }

  /** A spare lease for a request about to start (then in use); none when the budget is spent. */
  public takeSpare(): string | undefined {
    const lease = this.spare.pop();
    if (lease !== undefined) this.inUse.add(lease);
    return lease;
  }

  /** A finished request's lease: given back at the next exchange. */
  public release(lease: string): void {
    if (this.inUse.delete(lease)) this.toRelease.push(lease);
  }

  /** After the limiter started what it could: give back, ask for more, keep renewing. */
  public settle(waiting: number, leased: boolean): void {
    // Leases nobody waits for any more go back.
    if (waiting === 0 && this.spare.length > 0) this.toRelease.push(...this.spare.splice(0));
    if (leased) {
      // A lease given back frees room at once; otherwise a spent budget is asked after its pause.
      if (this.pollTimer === undefined || this.toRelease.length > 0) this.ask();
    } else if (!this.closed) {
      // Set aside: what this process held expires on its own.
      this.toRelease = [];
    }
    this.keepRenewing();
  }

  /** Stop the timers and give back every lease this process holds. */
  public async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.pollTimer !== undefined) clearTimeout(this.pollTimer);
    if (this.renewTimer !== undefined) clearInterval(this.renewTimer);
    this.pollTimer = undefined;
    this.renewTimer = undefined;
    const release = [...this.toRelease, ...this.spare.splice(0), ...this.inUse];
    this.toRelease = [];
    this.inUse.clear();
    if (release.length > 0) await this.budget.exchange(release, 0, 0).catch(() => undefined);
  }

  /** Leave the budget aside for a while (logged once per outage). */
  private setAside(err: unknown): void {
    this.setAsideUntil = this.opts.now() + this.opts.retryMs;
    // Leases not yet used are dropped: they expire on their own if the budget kept them.
    this.spare.length = 0;
    if (!this.outage) {
      this.outage = true;
      this.opts.log?.warn(
        {
          budget: this.budget.name,
          retryInMs: this.opts.retryMs,
          err: { message: err instanceof Error ? err.message : String(err) },
        },
        "kube request budget unreachable; only the per-process bound applies until it answers again",
      );
    }
    this.opts.wake();
  }

  /** Renew the leases in use every third of their lifetime, while there are any. */
  private keepRenewing(): void {
    if (this.inUse.size === 0) {
      if (this.renewTimer !== undefined) clearInterval(this.renewTimer);
      this.renewTimer = undefined;
      return;
    }
    this.renewTimer ??= setInterval(
      () => void this.budget.renew([...this.inUse]).catch(() => undefined),
      Math.max(10, Math.floor(this.budget.leaseMs / 3)),
    );
    this.renewTimer.unref?.();
  }

  /** One round trip to the budget: give back what finished, ask for what waits. */
  private ask(): void {
    if (this.asking) return;
    const want = this.closed ? 0 : Math.max(0, this.opts.demand() - this.spare.length);
    if (want === 0 && this.toRelease.length === 0) return;
    this.asking = true;
    const release = this.toRelease;
    this.toRelease = [];
    let timedOut = false;
    const answer = this.budget.exchange(release, want, this.inUse.size + this.spare.length);
    const timeout = setTimeout(() => {
      timedOut = true;
      this.asking = false;
      this.setAside(new Error(`no answer within ${this.opts.timeoutMs} ms`));
    }, this.opts.timeoutMs);
    answer.then(
      (granted) => {
        clearTimeout(timeout);
        if (timedOut) {
          // Granted after it was given up on: give them back at the next round trip.
          this.toRelease.push(...granted);
          return;
        }
        this.asking = false;
        this.granted(granted, want);
      },
      (err: unknown) => {
        clearTimeout(timeout);
        if (timedOut) return;
        this.asking = false;
        this.setAside(err);
      },
    );
  }

  /** The budget's answer to an ask for `want` leases: use them, or ask again after a pause. */
  private granted(granted: readonly string[], want: number): void {
    if (this.outage) {
      this.outage = false;
      this.opts.log?.info({ budget: this.budget.name }, "kube request budget answers again");
    }
    this.spare.push(...granted);
    this.pollMs = granted.length > 0 || want === 0 ? POLL_FIRST_MS : Math.min(POLL_LAST_MS, this.pollMs * 2);
    if (granted.length === 0 && want > 0 && this.pollTimer === undefined) {
      // Spent: ask again after a pause (jittered, so replicas do not ask in step).
      this.pollTimer = setTimeout(
        () => {
          this.pollTimer = undefined;
          this.opts.wake();
        },
        this.pollMs * (0.5 + Math.random()),
      );
    }
    this.opts.wake();
  }
}
