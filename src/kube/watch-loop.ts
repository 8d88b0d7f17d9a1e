/**
 * One list-then-watch loop, as an informer runs it: list to learn a resourceVersion, watch from it
 * (resuming from the last revision seen, bookmarks included), list again after 410 Gone (events
 * may have been missed), and back off after any other failure — slowly after one the server will
 * keep giving (401, 403, 404) until someone changes RBAC or the API.
 *
 * I/O-free: the owner supplies the list and the watch and hears of each list, each change event
 * and each connection and disconnection. Used by the discovery cache and the Deployment cache.
 */
import { ErrorCode, UnstuckError } from "../errors.js";
import type { Logger } from "../log.js";

/** One watch event as the API server streams it. */
export interface WatchEvent {
  readonly type: string;
  readonly object: Record<string, unknown>;
}

/**
 * Open a watch from `resourceVersion` (empty: from now); resolves once the server accepted it (200,
 * headers), rejects when it did not (e.g. 403). `onEvent` gets every event; `onEnd` is called once
 * when the stream ends (`undefined` for a clean end). The returned function stops the watch.
 */
export type OpenWatch = (
  resourceVersion: string,
  timeoutSeconds: number,
  onEvent: (e: WatchEvent) => void,
  onEnd: (err?: unknown) => void,
) => Promise<() => void>;

export interface WatchLoopIo {
  /**
   * List, keep what the list holds, and return its resourceVersion (to watch from); `again` when
   * an earlier list or watch came before (what changed in between was never seen).
   */
  list(again: boolean): Promise<string>;
  /** The watch, from the revision of the last list or event. */
  readonly watch: OpenWatch;
  /** An ADDED, MODIFIED or DELETED event (bookmarks and errors are the loop's own). */
  changed(e: WatchEvent): void;
  /** The watch is connected (`true`) or not (`false`, also while listing or backing off). */
  connected(up: boolean): void;
}

export interface WatchLoopOptions {
  /** What the logs call the loop, e.g. "discovery cache" or "deployment cache". */
  readonly name: string;
  /** The resource watched, for the logs. */
  readonly resource: string;
  /** What the owner does while not watching, for the first failure's warning. */
  readonly fallback: string;
  /** `timeoutSeconds` of one watch request; the watch resumes from its resourceVersion. */
  readonly timeoutSeconds: number;
  /** Pause after a persistent failure (401, 403, 404). */
  readonly slowPauseMs: number;
  /** Reconnect backoff after any other failure: first and longest pause. */
  readonly backoffMs: { readonly initial: number; readonly max: number };
  readonly log?: Logger;
}

/** An error the server will keep giving until someone changes RBAC or the API: retry slowly. */
function persistent(err: unknown): boolean {
  if (err instanceof UnstuckError) {
    return (
      err.code === ErrorCode.Forbidden ||
      err.code === ErrorCode.Unauthorized ||
      err.code === ErrorCode.NotFound
    );
  }
  const status = (err as { statusCode?: unknown } | null)?.statusCode;
  return status === 401 || status === 403 || status === 404;
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const status = (err as { statusCode?: unknown }).statusCode;
    return typeof status === "number" ? `HTTP ${status} ${err.message}` : err.message;
  }
  return String(err);
}

export class WatchLoop {
  private resourceVersion: string | undefined;
  private listed = false;
  private stop: (() => void) | undefined;
  private started = false;
  private closed = false;
  private readonly wakers = new Set<() => void>();

  public constructor(
    private readonly io: WatchLoopIo,
    private readonly options: WatchLoopOptions,
  ) {}

  /** Start the loop once; later calls do nothing. */
  public start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    void this.run();
  }

  /** Stop the watch and the loop for good. */
  public close(): void {
    if (this.closed) return;
    this.closed = true;
    const stop = this.stop;
    this.stop = undefined;
    stop?.();
    this.io.connected(false);
    for (const wake of this.wakers) wake();
    this.wakers.clear();
  }

  private async run(): Promise<void> {
    const { log, name, resource } = this.options;
    let failures = 0;
    let reported = false;
    while (!this.closed) {
      try {
        if (this.resourceVersion === undefined) {
          const rv = await this.io.list(this.listed);
          if (this.closed) return;
          this.listed = true;
          this.resourceVersion = rv;
        }
        const end = await this.stream(() => {
          failures = 0;
          if (reported) {
            reported = false;
            log?.info({ resource }, `${name}: watch established`);
          }
        });
        if (this.closed) return;
        if (end.gone) {
          this.resourceVersion = undefined;
          continue;
        }
        if (end.error === undefined) continue;
        throw end.error instanceof Error ? end.error : new Error(describe(end.error));
      } catch (err) {
        if (this.closed) return;
        failures++;
        const { backoffMs, slowPauseMs } = this.options;
        const pause = persistent(err)
          ? slowPauseMs
          : Math.min(backoffMs.max, backoffMs.initial * 2 ** Math.min(failures - 1, 20));
        const fields = { resource, error: describe(err), retryInMs: pause };
        if (!reported) {
          reported = true;
          log?.warn(fields, `${name}: cannot watch ${resource}; ${this.options.fallback}`);
        } else log?.debug(fields, `${name}: watch failed again`);
        await this.pause(pause * (0.8 + 0.4 * Math.random()));
      }
    }
  }

  /** One watch request, until it ends. */
  private stream(onOpen: () => void): Promise<{ gone?: boolean; error?: unknown }> {
    return new Promise((resolve) => {
      let settled = false;
      const finish = (r: { gone?: boolean; error?: unknown }): void => {
        if (settled) return;
        settled = true;
        this.io.connected(false);
        const stop = this.stop;
        this.stop = undefined;
        stop?.();
        resolve(r);
      };
      const onEvent = (e: WatchEvent): void => {
        if (settled) return;
        if (e.type === "ERROR") {
          const code = e.object.code;
          const message = typeof e.object.message === "string" ? e.object.message : "watch error";
          if (code === 410) finish({ gone: true });
          else finish({ error: Object.assign(new Error(message), { statusCode: code }) });
          return;
        }
        const meta = e.object.metadata;
        const rv =
          meta !== null && typeof meta === "object"
            ? (meta as Record<string, unknown>).resourceVersion
            : undefined;
        if (typeof rv === "string" && rv !== "") this.resourceVersion = rv;
        if (e.type === "ADDED" || e.type === "MODIFIED" || e.type === "DELETED") this.io.changed(e);
      };
      this.io
        .watch(this.resourceVersion ?? "", this.options.timeoutSeconds, onEvent, (err) =>
          finish(err === undefined || err === null ? {} : { error: err }),
        )
        .then(
          (stop) => {
            if (settled || this.closed) {
              stop();
              if (!settled) finish({});
              return;
            }
            this.stop = stop;
            this.io.connected(true);
            onOpen();
          },
          (err: unknown) => finish({ error: err }),
        );
    });
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      timer.unref();
      this.wakers.add(wake);
    });
  }
}
