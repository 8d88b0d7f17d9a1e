/**
 * Starting and stopping a runtime, in order: what `start` schedules for the role (the check of live
 * requests' signatures, the watcher, the approval sweep, the guard reconciler, the fleet heartbeat,
 * the Slack receiver) and what `stop` closes, first to last, within the shutdown timeout.
 */
import type { Worker } from "bullmq";
import { endUnverifiableRequests } from "../approvals/legacy.js";
import type { GuardReconciler } from "../jobs/guard-reconcile.js";
import { scheduleApprovalSweep } from "../jobs/queues.js";
import { closeWorker } from "../jobs/workers.js";
import { boundedStop, handBack, type RunningJob } from "../app/shutdown.js";
import type { SlackApp } from "../slack/app.js";
import type { WatcherService } from "../watcher/service.js";
import type { Config, Role } from "../config.js";
import type { Logger } from "../log.js";
import type { Engine } from "./engine.js";
import { HEARTBEAT_EVERY_MS, startHeartbeat } from "./fleet.js";
import { startReconciler } from "./workers.js";

/** How often the approval sweep runs (expiry, lost enqueues) unless the options say otherwise. */
const APPROVAL_SWEEP_EVERY_MS = 30_000;

export interface LifecycleParts {
  readonly role: Role;
  readonly engine: Engine;
  readonly watcher: WatcherService | undefined;
  readonly workers: readonly Worker[];
  readonly running: Iterable<RunningJob>;
  readonly slack: SlackApp | undefined;
  readonly options: {
    readonly config: Config;
    readonly log: Logger;
    readonly now: () => Date;
    /** Sweep period for expiry and lost enqueues (default 30 s). */
    readonly sweepEveryMs?: number;
    /** The deletion guard's reconcile loop: period and grace past `until`. */
    readonly guardReconcile?: { readonly everyMs?: number; readonly graceMs?: number };
    /** In a fleet: the workers' heartbeat period. */
    readonly fleet?: { readonly heartbeatMs?: number };
  };
}

export function runtimeLifecycle(parts: LifecycleParts): {
  start(): Promise<{ port?: number }>;
  stop(): Promise<void>;
} {
  const { role, engine, watcher, workers, running, slack, options } = parts;
  const { config, log, now } = options;
  const { base, audit, queues, guardSigner, notifyQueue, redis } = engine;
  const ownCluster = engine.fleet?.ownCluster;
  const presence = engine.fleet?.presence;
  const fleetQueues = engine.fleet?.queues;
  // Closes deletion guards past their window on every worker, whatever became of the close job.
  let reconciler: GuardReconciler | undefined;
  let heartbeat: { stop(): Promise<void> } | undefined;
  let stopped = false;
  return {
    async start() {
      // The bot ends live requests it cannot verify (signed with the shared key of before, or by no
      // key it holds) before anyone can vote on them or anything executes them.
      if (role !== "worker") {
        await endUnverifiableRequests({
          store: engine.store,
          signer: engine.signer,
          ...(config.legacyApprovalKey !== undefined ? { legacyKey: config.legacyApprovalKey } : {}),
          now,
          log,
        }).catch((err: unknown) => {
          log.error(
            { err: { message: err instanceof Error ? err.message : String(err) } },
            "could not check the live requests' signatures",
          );
        });
      }
      watcher?.start();
      if (role !== "bot")
        await scheduleApprovalSweep(queues.actions, options.sweepEveryMs ?? APPROVAL_SWEEP_EVERY_MS);
      if (role !== "bot" && !stopped) {
        reconciler ??= startReconciler({
          kube: base.kube,
          guardSigner,
          now,
          audit,
          log,
          windowSeconds: config.deletionWindowSeconds,
          tuning: options.guardReconcile,
        });
      }
      // Present once its workers run: the bot sends this cluster's commands from now on.
      if (role !== "bot" && !stopped && ownCluster !== undefined && presence !== undefined) {
        heartbeat ??= startHeartbeat(presence, ownCluster, {
          everyMs: options.fleet?.heartbeatMs ?? HEARTBEAT_EVERY_MS,
          now,
          log,
        });
      }
      return slack !== undefined ? slack.start() : {};
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      // Slack first (no new commands), then the workers: they take no new job and finish theirs.
      const graceful = (async () => {
        // The watcher first: its lease released, another replica leads at once.
        await watcher?.stop().catch(() => undefined);
        // Absent at once: the bot answers this cluster's commands "no live workers", not after a wait.
        await heartbeat?.stop();
        await reconciler?.stop();
        await slack?.stop();
        await Promise.all(workers.map((w) => closeWorker(w)));
        await Promise.all([(fleetQueues ?? queues).close(), notifyQueue.close()]);
        // The discovery watches of the long-running kube adapter.
        await base.kube.close().catch(() => undefined);
        await redis.quit().catch(() => undefined);
      })();
      await boundedStop({
        timeoutMs: config.shutdownTimeoutMs,
        log,
        graceful,
        handBack: () => handBack(running, log),
        // Workers force-closed; the Redis connection is left to the graceful path.
        abandon: () => {
          for (const w of workers) void w.close(true).catch(() => undefined);
        },
      });
    },
  };
}
