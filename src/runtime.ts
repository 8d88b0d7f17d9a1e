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
import type { ApprovalNotifier, RetryPolicy } from "./approvals/notifier.js";
import { ApprovalPolicy } from "./approvals/policy.js";
import { ApprovalSigner } from "./approvals/integrity.js";
import { ApprovalStore } from "./approvals/store.js";
import { endUnverifiableRequests } from "./approvals/legacy.js";
import { ApprovalWorkflow, type ApprovalWorkflowDeps } from "./approvals/workflow.js";
import { DeletionGuardSigner } from "./approvals/deletion-guard-token.js";
import { AuditLog } from "./audit/log.js";
import type { Config, Role } from "./config.js";
import { ownClusterOf, processKeys } from "./trust/process-keys.js";
import type { RedisConnection } from "./redis-connection.js";
import {
  createQueues,
  executionEnqueuer,
  scheduleApprovalSweep,
  type ExecutionRetry,
  type Queues,
} from "./jobs/queues.js";
import { createNotifyQueue, queuedNotifier, type NotifyRetry } from "./jobs/notify.js";
import { startNamespaceGone } from "./jobs/waits.js";
import { jobSeal, sealedWaits } from "./jobs/sealed-jobs.js";
import { RepairCards } from "./jobs/repair-cards.js";
import { NamespaceMessages } from "./jobs/namespace-messages.js";
import { redisPostLedger } from "./jobs/post-once.js";
import type { GuardReconciler } from "./jobs/guard-reconcile.js";
import { closeWorker } from "./jobs/workers.js";
import type { Logger } from "./log.js";
import { createServices } from "./services.js";
import { ChannelGate } from "./slack/channel-gate.js";
import type { SlackApp } from "./slack/app.js";
import { createSlackAuditMirror, createSlackDirectory } from "./slack/notifier.js";
import type { WatcherOptions } from "./watcher/watcher.js";
import type { WatcherService } from "./watcher/service.js";
import type { NamespaceWatchIo } from "./kube/namespace-watch.js";
import { namespaceWaitStarter } from "./app/namespace-wait.js";
import { boundedStop, handBack } from "./app/shutdown.js";
import { createBotApp } from "./wiring/bot.js";
import { connectRedis } from "./wiring/redis.js";
import { outageOf } from "./wiring/redis-outage.js";
import { createSlackClients, requireSlack } from "./wiring/slack-clients.js";
import { createWatcher } from "./wiring/watcher.js";
import { createWorkers, startReconciler, trackRunning } from "./wiring/workers.js";
import {
  createCommandsWorker,
  FleetQueues,
  fleetEnqueuer,
  HEARTBEAT_EVERY_MS,
  localHandlers,
  redisNonceClaims,
  startHeartbeat,
} from "./wiring/fleet.js";
import { FleetPresence } from "./fleet/presence.js";
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

/** How often the approval sweep runs (expiry, lost enqueues) unless the options say otherwise. */
const APPROVAL_SWEEP_EVERY_MS = 30_000;

export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { config, log } = options;
  const role = options.role ?? config.role;
  const slackConfig = requireSlack(config, role);
  // The bot signs as the bot, a worker as its cluster; everyone verifies with every public key.
  const keys = processKeys(config, role);
  const signer = new ApprovalSigner(keys);
  // The deletion guard's annotation is signed by this cluster's workers and verified as theirs.
  const guardSigner = new DeletionGuardSigner({
    cluster: ownClusterOf(config),
    keyring: keys.keyring,
    ...(keys.worker !== undefined ? { worker: keys.worker } : {}),
  });
  const now = options.now ?? (() => new Date());
  const base = options.services ?? createServices(config, log, now, { longRunning: true });
  const cluster = config.clusterName ?? "default";
  const redis = await connectRedis(config, log);
  const { client, notifierClient, statusClient } = createSlackClients(slackConfig, log);
  const prefix = config.redisPrefix;
  const store = new ApprovalStore(redis, {
    prefix: RedisKeys.approvals(prefix),
    signer,
    auditKey: RedisKeys.audit(prefix),
    log,
  });
  const audit = new AuditLog(redis, {
    key: RedisKeys.audit(prefix),
    log,
    ...(config.auditChannel !== undefined
      ? { mirror: createSlackAuditMirror(client, config.auditChannel) }
      : {}),
  });
  // Channel ids and name patterns (incident channels); one name cache for the listeners and the policy.
  const channelGate = new ChannelGate({
    ids: config.channels,
    patterns: config.channelPatterns,
    lookup: (id) => client.conversations.info({ channel: id }).then((r) => r.channel?.name),
  });
  const policy = new ApprovalPolicy({
    channels: config.channels,
    channelGate,
    approvers: config.approvers,
    directory: createSlackDirectory(client),
    now,
  });
  // In a fleet each cluster has its own queues; this process's workers consume its cluster's only.
  const fleet = config.fleet;
  const ownCluster = fleet !== undefined ? config.clusterName : undefined;
  const fleetQueues =
    fleet !== undefined
      ? new FleetQueues(redis, RedisKeys.bull(prefix), log, {
          ...(keys.bot !== undefined ? { bot: keys.bot } : {}),
          keyring: keys.keyring,
        })
      : undefined;
  const presence = fleet !== undefined ? new FleetPresence(redis, prefix) : undefined;
  const queues =
    fleetQueues !== undefined
      ? fleetQueues.queues(ownCluster ?? fleet?.clusters[0]?.name ?? cluster)
      : createQueues({ connection: redis, prefix: RedisKeys.bull(prefix) });

  // Every diagnosis card and "Watching…" message posted about a namespace, for its repaint
  // (one truth per thing).
  const namespaceMessages = new NamespaceMessages(redis, prefix, {
    ...(keys.bot !== undefined ? { key: keys.bot } : keys.worker !== undefined ? { key: keys.worker } : {}),
    keyring: keys.keyring,
  });
  // The traffic-path card each repair was asked from, so it loses *Fix the path* once the repair is made.
  const repairCards = new RepairCards(redis, prefix, {
    ...(keys.bot !== undefined ? { key: keys.bot } : {}),
    keyring: keys.keyring,
  });
  // Every thread reply and file a job posts, recorded: a job step that runs again posts nothing twice.
  const posted = redisPostLedger(redis, prefix, {
    seal: {
      ...(keys.worker !== undefined ? { key: keys.worker } : keys.bot !== undefined ? { key: keys.bot } : {}),
      keyring: keys.keyring,
    },
  });
  // What this process seals the waits it queues with (its key), and opens them with (the bot's, or
  // this cluster's workers'): a wait written straight into Redis runs nothing.
  const waitSeal = jobSeal(
    {
      ...(keys.worker !== undefined ? { key: keys.worker } : keys.bot !== undefined ? { key: keys.bot } : {}),
      keyring: keys.keyring,
    },
    ownClusterOf(config),
  );
  const waits = sealedWaits(queues.waits, waitSeal);
  const startWait = namespaceWaitStarter({
    start: (request) => startNamespaceGone(waits, request, now()),
    cluster,
    config,
  });

  // Each edit and reply is a job in Redis: a process that dies or a Slack outage loses none of them.
  const notifyQueue = createNotifyQueue(redis, RedisKeys.bull(prefix));
  const durable = queuedNotifier(notifyQueue, options.notify?.job);
  const notifier: ApprovalNotifier = {
    requestUpdated: (request) => durable.requestUpdated(request),
    threadReply: (request, text) => durable.threadReply(request, text),
  };

  const workflowDeps: ApprovalWorkflowDeps = {
    store,
    policy,
    audit,
    kube: base.kube,
    enqueueExecution:
      fleetQueues !== undefined && fleet !== undefined
        ? fleetEnqueuer(fleetQueues, fleet, options.execution)
        : executionEnqueuer(queues.actions, options.execution),
    ...(ownCluster !== undefined ? { cluster: ownCluster } : {}),
    now,
    approvalsRequired: config.approvalsRequired,
    requestTtlSeconds: config.requestTtlSeconds,
    deletionWindowSeconds: config.deletionWindowSeconds,
    notifier,
    log,
  };
  const workflow = new ApprovalWorkflow(workflowDeps);
  const services: CommandServices = {
    ...base,
    diagnosisDeadlineMs: base.diagnosisDeadlineMs ?? config.diagnosisDeadlineMs,
    approvals: { workflow, audit },
  };
  // What a fleet's worker runs for the bot plans changes and hands them back: only the bot files them.
  const drafting = new ApprovalWorkflow({ ...workflowDeps, files: "bot" });

  // First to notice: one leader among replicas watches namespaces and posts the
  // diagnosis of one stuck past the threshold to the watch channel. It runs where the workers run
  // (worker or all): in a fleet each cluster's workers watch their own cluster (their own lease and
  // records), and a Slack-facing bot process watches nothing, so its ServiceAccount needs no watch.
  const watcher =
    role === "bot" || (fleet !== undefined && ownCluster === undefined)
      ? undefined
      : createWatcher({
          config,
          redis,
          prefix: ownCluster !== undefined ? RedisKeys.fleet(prefix, ownCluster) : prefix,
          ...(ownCluster !== undefined ? { cluster: ownCluster } : {}),
          services,
          client,
          seal: {
            ...(keys.worker !== undefined
              ? { key: keys.worker }
              : keys.bot !== undefined
                ? { key: keys.bot }
                : {}),
            keyring: keys.keyring,
            cluster: ownClusterOf(config),
          },
          log,
          options: options.watcher,
        });

  // What the workers and the Slack app share; each takes the rest of what it needs.
  const shared = {
    config,
    redis,
    prefix,
    cluster,
    audit,
    workflow,
    namespaceMessages,
    repairCards,
    startWait,
    client,
    now,
    log,
  };
  // A bot process only enqueues: its jobs run wherever a worker runs.
  const workers: Worker[] =
    role === "bot"
      ? []
      : createWorkers({
          ...shared,
          base,
          store,
          signer,
          guardSigner,
          seal: {
            ...(keys.worker !== undefined
              ? { key: keys.worker }
              : keys.bot !== undefined
                ? { key: keys.bot }
                : {}),
            keyring: keys.keyring,
          },
          waitSeal,
          waits,
          policy,
          notifier,
          queues,
          notifyQueue,
          posted,
          notifierClient,
          statusClient,
          ...(ownCluster !== undefined ? { fleetCluster: ownCluster } : {}),
          tuning: options,
        });
  // A fleet's worker also runs the bot's commands for its cluster, with its own ports.
  if (role !== "bot" && ownCluster !== undefined && keys.worker !== undefined) {
    workers.push(
      createCommandsWorker(
        { connection: redis, prefix: RedisKeys.bull(prefix), cluster: ownCluster, ...options.worker },
        localHandlers(config, { ...services, approvals: { workflow: drafting, audit } }),
        {
          worker: keys.worker,
          keyring: keys.keyring,
          claimNonce: redisNonceClaims(redis, prefix, ownCluster),
          audit,
          now,
        },
        log,
      ),
    );
  }
  // The jobs running here now, with their lock tokens: what a stop that runs out of time hands back.
  const running = trackRunning(workers, outageOf(redis, log));
  const slack =
    role === "worker"
      ? undefined
      : createBotApp({
          ...shared,
          channelGate,
          services,
          kube: base.kube,
          ...(fleet !== undefined && fleetQueues !== undefined && presence !== undefined
            ? {
                fleet: {
                  fleet,
                  queues: fleetQueues,
                  presence,
                  // The waits the bot starts on a cluster (`watch`), sealed with its own key.
                  waitSeal: (c: string) =>
                    jobSeal(
                      { ...(keys.bot !== undefined ? { key: keys.bot } : {}), keyring: keys.keyring },
                      c,
                    ),
                },
              }
            : {}),
        });

  // Closes deletion guards past their window on every worker, whatever became of the close job.
  let reconciler: GuardReconciler | undefined;
  let heartbeat: { stop(): Promise<void> } | undefined;
  let stopped = false;
  return {
    role,
    ...(slack !== undefined ? { slack } : {}),
    workflow,
    audit,
    queues,
    ...(fleetQueues !== undefined && presence !== undefined
      ? { fleet: { queues: fleetQueues, presence } }
      : {}),
    services,
    redis,
    ...(watcher !== undefined ? { watcher } : {}),
    async start() {
      // The bot ends live requests it cannot verify (signed with the shared key of before, or by no
      // key it holds) before anyone can vote on them or anything executes them.
      if (role !== "worker") {
        await endUnverifiableRequests({
          store,
          signer,
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
