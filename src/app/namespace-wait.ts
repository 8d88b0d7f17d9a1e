/**
 * The namespace-gone wait as the use cases start it: one wait per namespace, so a second request
 * (an approved removal while a `watch` runs, or the other way round) joins the running wait and is
 * told which thread reports on it.
 */
import type { Config } from "../config.js";
import type { NamespaceGoneRequest, NamespaceGoneStarted } from "../jobs/waits.js";

/** A posted message or the thread under it. */
export interface PostedMessage {
  readonly channel: string;
  readonly ts: string;
}

/** Start the namespace's wait in this thread, or join the one running (one wait per namespace). */
export type StartNamespaceWait = (namespace: string, thread: PostedMessage) => Promise<NamespaceGoneStarted>;

export interface NamespaceWaitDeps {
  /** Adds the wait, or finds the one running (the waits queue). */
  readonly start: (request: NamespaceGoneRequest) => Promise<NamespaceGoneStarted>;
  readonly cluster: string;
  /** `UNSTUCK_WAIT_TIMEOUT_SECONDS` and `UNSTUCK_WAIT_INTERVAL_SECONDS`. */
  readonly config: Pick<Config, "waitTimeoutSeconds" | "waitIntervalSeconds">;
}

export function namespaceWaitStarter(deps: NamespaceWaitDeps): StartNamespaceWait {
  return (namespace, thread) =>
    deps.start({
      cluster: deps.cluster,
      namespace,
      channel: thread.channel,
      threadTs: thread.ts,
      timeoutMs: deps.config.waitTimeoutSeconds * 1000,
      intervalMs: deps.config.waitIntervalSeconds * 1000,
    });
}

/** Where the running wait reports, as a message to point at. */
export function runningThread(started: NamespaceGoneStarted): PostedMessage {
  return { channel: started.channel, ts: started.threadTs };
}
