/**
 * The bot assembled: Redis, the approval store, policy, audit log, workflow, BullMQ queues and
 * workers, and the Slack app with its commands and buttons. `main.ts` runs it; the end-to-end
 * tests run the very same wiring against the simulators. It only constructs and connects: what
 * follows an outcome, a posted answer or a form is in `src/app/`; the longer constructions (the
 * Slack clients, the workers, the Slack app) are in `src/wiring/`.
 *
 * The role (`UNSTUCK_ROLE`) says which half runs here: `bot` takes Slack commands and clicks and
 * enqueues, with no worker; `worker` runs the workers and the approval sweep, with no Slack
 * receiver (it posts replies and edits through the Web API only); `all` runs both. Everything
 * they share lives in Redis, so any number of each can run on one prefix.
 */
import type { Worker } from "bullmq";
import type { CommandServices } from "./command-contract.js";
import type { RetryPolicy } from "./approvals/notifier.js";
import type { ApprovalWorkflow } from "./approvals/workflow.js";
import type { AuditLog } from "./audit/log.js";
import type { Config, Role } from "./config.js";
import { ownClusterOf } from "./trust/process-keys.js";
import type { RedisConnection } from "./redis-connection.js";
import type { ExecutionRetry, Queues } from "./jobs/queues.js";
import type { NotifyRetry } from "./jobs/notify.js";
import { jobSeal } from "./jobs/sealed-jobs.js";
import type { Logger } from "./log.js";
import type { SlackApp } from "./slack/app.js";
import type { WatcherOptions } from "./watcher/watcher.js";
import type { WatcherService } from "./watcher/service.js";
import type { NamespaceWatchIo } from "./kube/namespace-watch.js";
import { createBotApp } from "./wiring/bot.js";
import { createEngine, type Engine } from "./wiring/engine.js";
import { runtimeLifecycle } from "./wiring/lifecycle.js";
import { outageOf } from "./wiring/redis-outage.js";
import { createWatcher } from "./wiring/watcher.js";
import { createWorkers, trackRunning } from "./wiring/workers.js";
import { createCommandsWorker, type FleetQueues, localHandlers, redisNonceClaims } from "./wiring/fleet.js";
import type { FleetPresence } from "./fleet/presence.js";
import { RedisKeys } from "./redis/keys.js";

export interface RuntimeOptions {
  readonly config: Config;
  readonly log: Logger;
  /** What runs in this process; default `config.role` (`UNSTUCK_ROLE`). */
  readonly role?: Role;
  readonly now?: () => Date;
  /** Services to use instead of building them from config (tests pass a simulator-backed kube). */
  readonly services?: Omit<CommandServices, "approvals">;
  /** Sweep period for expiry and lost enqueues (default 30 s). */
  readonly sweepEveryMs?: number;
  /** Worker lock settings (tests shorten them). */
  readonly worker?: { readonly lockDuration?: number; readonly stalledInterval?: number };
  /** Attempts and backoff of an execution job (tests shorten them). */
  readonly execution?: ExecutionRetry;
  /** Pause and deadline of the path re-check after a namespace is gone (tests shorten them). */
  readonly pathRecheck?: { readonly intervalMs?: number; readonly timeoutMs?: number };
  /** Pauses of the path waits after a repair (tests shorten them; production uses each kind's default). */
  readonly edgeWaits?: { readonly intervalMs?: number; readonly maxIntervalMs?: number };
  /** The deletion guard's reconcile loop on worker processes: period and grace past `until` (tests shorten them). */
  readonly guardReconcile?: { readonly everyMs?: number; readonly graceMs?: number };
  /** Retries of a message edit or reply: the in-process loop, then the durable job's (tests shorten them). */
  readonly notify?: { readonly retry?: RetryPolicy; readonly job?: NotifyRetry };
  /** In a fleet: the workers' heartbeat period (default 10 s; their presence lives three of them). */
  readonly fleet?: { readonly heartbeatMs?: number };
  /**
   * The stuck-namespace watcher (runs when `UNSTUCK_WATCH_CHANNEL` is set): its namespace watch
   * (tests pass one on the simulator; default from the kubeconfig) and timings (tests shorten them).
   */
  readonly watcher?: {
    readonly io?: NamespaceWatchIo;
    readonly tuning?: Pick<
      WatcherOptions,
      "watchTimeoutSeconds" | "recheckMs" | "updateEveryMs" | "concurrency" | "backoffMs"
    >;
  };
}

export interface Runtime {
  readonly role: Role;
  /** The Slack app (absent for the `worker` role, which receives nothing from Slack). */
  readonly slack?: SlackApp;
  readonly workflow: ApprovalWorkflow;
  readonly audit: AuditLog;
  /** The queues of this process's cluster (a fleet's bot, serving none: the first cluster's). */
  readonly queues: Queues;
  /** In a fleet: every cluster's queues, and the workers' presence. */
  readonly fleet?: { readonly queues: FleetQueues; readonly presence: FleetPresence };
  readonly services: CommandServices;
  /** One Redis or a Redis Cluster (`REDIS_URL=redis+cluster://…`). */
  readonly redis: RedisConnection;
  /** The stuck-namespace watcher, when `UNSTUCK_WATCH_CHANNEL` is set (it watches only while it leads). */
  readonly watcher?: WatcherService;
  /** Start receiving (bot) and schedule the approval sweep (worker); the HTTP port when there is one. */
  start(): Promise<{ port?: number }>;
  /**
   * Stop taking work, let running jobs finish, close Redis — within `UNSTUCK_SHUTDOWN_TIMEOUT_SECONDS`.
   * A job still running near the end is handed back (to waiting, its lock released) so another
   * worker takes it at once rather than after its lock expires.
   */
  stop(): Promise<void>;
}

/**
 * The runtime of one process, built in order: the engine, the watcher, the workers, what they run, the
 * Slack app; then its start and stop (`src/wiring/lifecycle.ts`).
 */
export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { config, log } = options;
  const role = options.role ?? config.role;
  const now = options.now ?? (() => new Date());
  const engine = await createEngine({ ...options, role, now });
  const { services, redis, audit, workflow, queues, fleet } = engine;
  const built: Built = { role, engine, options, now };
  const watcher = watcherOf(built);
  const workers = workersOf(built);
  // The jobs running here now, with their lock tokens: what a stop that runs out of time hands back.
  const running = trackRunning(workers, outageOf(redis, log));
  const slack = slackOf(built);
  return {
    role,
    ...(slack !== undefined ? { slack } : {}),
    workflow,
    audit,
    queues,
    ...(fleet !== undefined ? { fleet: { queues: fleet.queues, presence: fleet.presence } } : {}),
    services,
    redis,
    ...(watcher !== undefined ? { watcher } : {}),
    ...runtimeLifecycle({ role, engine, watcher, workers, running, slack, options: { ...options, now } }),
  };
}

/** What each part of the runtime is built from: the role, the engine, the options and the clock. */
interface Built {
  readonly role: Role;
  readonly engine: Engine;
  readonly options: RuntimeOptions;
  readonly now: () => Date;
}

/**
 * First to notice: one leader among replicas watches namespaces and posts the diagnosis of one stuck
 * past the threshold to the watch channel. It runs where the workers run (worker or all): in a fleet
 * each cluster's workers watch their own cluster (their own lease and records), and a Slack-facing bot
 * process watches nothing, so its ServiceAccount needs no watch.
 */
function watcherOf({ role, engine, options }: Built): WatcherService | undefined {
  const { config, log } = options;
  const ownCluster = engine.fleet?.ownCluster;
  return role === "bot" || (engine.fleet !== undefined && ownCluster === undefined)
    ? undefined
    : createWatcher({
        config,
        redis: engine.redis,
        prefix: ownCluster !== undefined ? RedisKeys.fleet(engine.prefix, ownCluster) : engine.prefix,
        ...(ownCluster !== undefined ? { cluster: ownCluster } : {}),
        services: engine.services,
        client: engine.client,
        seal: { ...engine.seal, cluster: ownClusterOf(config) },
        log,
        options: options.watcher,
      });
}

/** The workers this process runs: none for a bot; a fleet's worker also runs its cluster's commands. */
function workersOf({ role, engine, options, now }: Built): Worker[] {
  const { config, log } = options;
  const { keys, redis, audit } = engine;
  const ownCluster = engine.fleet?.ownCluster;
  // A bot process only enqueues: its jobs run wherever a worker runs.
  const workers: Worker[] =
    role === "bot"
      ? []
      : createWorkers({
          ...engine,
          config,
          now,
          log,
          ...(ownCluster !== undefined ? { fleetCluster: ownCluster } : {}),
          tuning: options,
        });
  // A fleet's worker also runs the bot's commands for its cluster, with its own ports.
  if (role !== "bot" && ownCluster !== undefined && keys.worker !== undefined) {
    workers.push(
      createCommandsWorker(
        { connection: redis, prefix: RedisKeys.bull(engine.prefix), cluster: ownCluster, ...options.worker },
        localHandlers(config, { ...engine.services, approvals: { workflow: engine.drafting, audit } }),
        {
          worker: keys.worker,
          keyring: keys.keyring,
          claimNonce: redisNonceClaims(redis, engine.prefix, ownCluster),
          audit,
          now,
        },
        log,
      ),
    );
  }
  return workers;
}

/** The Slack app, for every role but `worker`; in a fleet it sends to the clusters' queues. */
function slackOf({ role, engine, options, now }: Built): SlackApp | undefined {
  const { keys, fleet } = engine;
  return role === "worker"
    ? undefined
    : createBotApp({
        ...engine,
        config: options.config,
        now,
        log: options.log,
        kube: engine.base.kube,
        ...(fleet !== undefined
          ? {
              fleet: {
                fleet: fleet.fleet,
                queues: fleet.queues,
                presence: fleet.presence,
                // The waits the bot starts on a cluster (`watch`), sealed with its own key.
                waitSeal: (c: string) =>
                  jobSeal({ ...(keys.bot !== undefined ? { key: keys.bot } : {}), keyring: keys.keyring }, c),
              },
            }
          : { fleet: undefined }),
      });
}
