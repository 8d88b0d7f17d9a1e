/**
 * The bot assembled: Redis, the approval store, policy, audit log, workflow, BullMQ queues and
 * workers, and the Slack app with its commands and buttons. `main.ts` runs it; the end-to-end
 * tests run the very same wiring against the simulators.
 *
 * The role (`UNSTUCK_ROLE`) says which half runs here: `bot` takes Slack commands and clicks and
 * enqueues, with no worker; `worker` runs the workers and the approval sweep, with no Slack
 * receiver (it posts replies and edits through the Web API only); `all` runs both. Everything
 * they share lives in Redis, so any number of each can run on one prefix.
 */
import { WebClient } from "@slack/web-api";
import type { Job, Worker } from "bullmq";
import { auditObserver } from "./audit/observe.js";
import { requestRemovalWithPlan } from "../commands/finalize.js";
import { defaultRegistry, type Registry } from "../commands/index.js";
import type { CommandResult, CommandServices } from "./command-contract.js";
import type { ApprovalNotifier } from "./approvals/notifier.js";
import { ApprovalPolicy } from "./approvals/policy.js";
import { ApprovalSigner } from "./approvals/integrity.js";
import { ApprovalStore } from "./approvals/store.js";
import type { ApprovalRequest } from "./approvals/types.js";
import { ApprovalWorkflow } from "./approvals/workflow.js";
import { AuditLog } from "./audit/log.js";
import { requireApprovalKey, type Config, type Role } from "./config.js";
import { createRedisConnection, type RedisConnection } from "./redis-connection.js";
import { diagnoseNamespace } from "./diagnosis/diagnose.js";
import { resolveResourceType } from "./diagnosis/removal-plan.js";
import { ErrorCode, UnstuckError, toUserError } from "./errors.js";
import {
  createQueues,
  executionEnqueuer,
  scheduleApprovalSweep,
  type ExecutionRetry,
  type Queues,
} from "./jobs/queues.js";
import {
  createNotifyQueue,
  createNotifyWorker,
  queueMessageEdit,
  queuedNotifier,
  type NotifyRetry,
} from "./jobs/notify.js";
import { startNamespaceGone, type NamespaceGoneStarted, type ThreadCard } from "./jobs/waits.js";
import { NamespaceMessageKind, NamespaceMessages } from "./jobs/namespace-messages.js";
import { postKey, redisPostLedger } from "./jobs/post-once.js";
import { redisEventClaims } from "./slack/event-dedupe.js";
import { renderDiagnosisBlocks } from "./slack/blocks/diagnosis.js";
import { renderDiagnosisGone, renderWatchFinished, renderWatchJoined } from "./slack/blocks/watch.js";
import { messageLink } from "./slack/links.js";
import { retrying } from "./approvals/notifier.js";
import type { KnownBlock } from "@slack/types";
import { enqueueEdgeWait, type EdgeWaitTarget } from "./jobs/edge-waits.js";
import { enqueuePathRecheck, type Replanned } from "./jobs/path-recheck.js";
import { enqueueGuardClose } from "./jobs/deletion-guard.js";
import { startGuardReconciler, type GuardReconciler } from "./jobs/guard-reconcile.js";
import { DeletionGuardSigner } from "./approvals/deletion-guard-token.js";
import { createEdgeProbe } from "./net/probe.js";
import type { RepointApplied } from "./actions/repoint-path.js";
import type { RepointPathAction } from "./approvals/types.js";
import { registerRepairActions } from "./slack/repair.js";
import { registerDiagnosisActions } from "./slack/diagnosis-actions.js";
import { requestRepairWithPlan } from "../commands/repoint.js";
import { closeWorker, createActionsWorker, createWaitsWorker } from "./jobs/workers.js";
import type { Logger } from "./log.js";
import { collectOrphans } from "./orphans/collect.js";
import { renderOrphansText } from "./render/orphans-text.js";
import { renderTraceBlocks } from "./slack/blocks/trace.js";
import { planPathRepair } from "./traffic/repoint.js";
import { createServices } from "./services.js";
import { ChannelGate } from "./slack/channel-gate.js";
import { createSlackApp, type SlackApp } from "./slack/app.js";
import { boltLogger } from "./slack/bolt-logger.js";
import { postApprovalRequest, registerApprovalActions } from "./slack/approvals.js";
import {
  createSlackApprovalNotifier,
  createSlackAuditMirror,
  createSlackDirectory,
  createSlackThreadReporter,
  slackRetryVerdict,
} from "./slack/notifier.js";
import type { RetryPolicy } from "./approvals/notifier.js";
import { diagnoseOptions } from "../commands/finalize.js";
import { loadKubeConfig } from "./kube/client-node-adapter.js";
import { countedRetries, countRateLimits } from "./slack/web-metrics.js";
import { createNamespaceWatchIo, type NamespaceWatchIo } from "./kube/namespace-watch.js";
import { createWatcherService, slackWatcherClient, type WatcherService } from "./watcher/service.js";
import type { WatcherOptions } from "./watcher/watcher.js";

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
  readonly queues: Queues;
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

export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { config, log } = options;
  const role = options.role ?? config.role;
  const slackConfig = config.slack;
  if (!slackConfig || (role !== "worker" && slackConfig.signingSecret === "" && !slackConfig.appToken)) {
    throw new UnstuckError(
      ErrorCode.Config,
      `Slack is not configured: set ${config.missingSlack.join(" and ")}.`,
      {
        variable: config.missingSlack[0],
      },
    );
  }
  const signer = new ApprovalSigner(requireApprovalKey(config), {
    ...(config.approvalKeyPrevious !== undefined ? { previous: config.approvalKeyPrevious } : {}),
  });
  // The deletion guard's annotation is signed under a key derived from the same approval key.
  const guardSigner = new DeletionGuardSigner(requireApprovalKey(config), {
    ...(config.approvalKeyPrevious !== undefined ? { previous: config.approvalKeyPrevious } : {}),
  });
  const now = options.now ?? (() => new Date());
  const base = options.services ?? createServices(config, log, now, { longRunning: true });
  const cluster = config.clusterName ?? "default";

  // BullMQ needs maxRetriesPerRequest: null on connections its workers block on.
  const redis = createRedisConnection(config, { maxRetriesPerRequest: null, lazyConnect: true });
  redis.on("error", (err: Error) => log.warn({ err: { message: err.message } }, "redis connection error"));
  await redis.connect().catch((err: unknown) => {
    throw new UnstuckError(
      ErrorCode.Unreachable,
      `Cannot reach Redis at REDIS_URL (${err instanceof Error ? err.message : String(err)}).`,
      { variable: "REDIS_URL" },
    );
  });

  const clientOptions = {
    // Through pino, with the token and secrets scrubbed, like Bolt's own client.
    logger: boltLogger(log.child({ component: "web-api" }), [
      slackConfig.botToken,
      slackConfig.signingSecret,
      slackConfig.appToken ?? "",
    ]),
    ...(slackConfig.apiUrl !== undefined ? { slackApiUrl: slackConfig.apiUrl } : {}),
    retryConfig: countedRetries(),
  };
  const client = countRateLimits(new WebClient(slackConfig.botToken, clientOptions));
  // The notifier retries by itself, re-reading the stored request before each attempt; this client's
  // own retries would re-send a stale body (and wait up to 30 minutes), so it has none.
  const notifierClient = countRateLimits(
    new WebClient(slackConfig.botToken, {
      ...clientOptions,
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
    }),
  );
  const prefix = config.redisPrefix;
  const store = new ApprovalStore(redis, {
    prefix: `${prefix}:approvals`,
    signer,
    auditKey: `${prefix}:audit`,
    log,
  });
  const audit = new AuditLog(redis, {
    key: `${prefix}:audit`,
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
  const queues = createQueues({ connection: redis, prefix: `${prefix}:bull` });

  // Every diagnosis card and "Watching…" message posted about a namespace, for its repaint
  // (one truth per thing).
  const namespaceMessages = new NamespaceMessages(redis, prefix);
  // Every thread reply and file a job posts, recorded: a job step that runs again posts nothing twice.
  const posted = redisPostLedger(redis, prefix);
  /** Start the namespace's wait, or join the one running (one wait per namespace). */
  const startWait = async (
    namespace: string,
    thread: { channel: string; ts: string },
  ): Promise<NamespaceGoneStarted> =>
    startNamespaceGone(
      queues.waits,
      {
        cluster,
        namespace,
        channel: thread.channel,
        threadTs: thread.ts,
        timeoutMs: config.waitTimeoutSeconds * 1000,
        intervalMs: config.waitIntervalSeconds * 1000,
      },
      now(),
    );

  // After a finalizer is removed, watch the namespace go, in the request's thread.
  // `current` lets every replica paint the stored state, never an older one it happens to hold.
  const slackNotifier = createSlackApprovalNotifier({
    client: notifierClient,
    now,
    log,
    current: (id) => store.get(id),
    ...(options.notify?.retry !== undefined ? { retry: options.notify.retry } : {}),
  });
  // Each edit and reply is a job in Redis: a process that dies or a Slack outage loses none of them.
  const notifyQueue = createNotifyQueue(redis, `${prefix}:bull`);
  const durable = queuedNotifier(notifyQueue, options.notify?.job);
  const notifier: ApprovalNotifier = {
    requestUpdated: (request) => durable.requestUpdated(request),
    threadReply: (request, text) => durable.threadReply(request, text),
  };
  /** Started from the executor's outcome: what to watch once an approved change is made. */
  const afterDone = async (request: ApprovalRequest, applied?: RepointApplied): Promise<void> => {
    const thread = request.message;
    if (thread === undefined) return;
    const action = request.action;
    // A clean-up has nothing to wait for: its outcome says what was deleted.
    if (action.type === "delete-orphans") return;
    // An opened deletion guard: its outcome said so, and its close is already scheduled.
    if (action.type === "open-deletion-guard") return;
    if (action.type === "remove-finalizer") {
      const namespace = action.target.namespace;
      // An Active namespace has nothing to wait for; a Terminating one, or one already gone, does
      // (the wait then reports the result in the thread at its first check).
      const ns = await base.kube.getNamespace(namespace);
      if (ns === null || ns.deletionTimestamp) {
        const started = await startWait(namespace, thread);
        // Another wait already reports on it: say where, instead of a second status and "gone".
        if (started.joined) {
          await posted.once(postKey("wait-joined", request.id), () =>
            client.chat.postMessage({
              channel: thread.channel,
              thread_ts: thread.ts,
              text: `Namespace ${namespace} is already being watched; its progress and the result are in that thread: ${messageLink({ channel: started.channel, ts: started.threadTs })}`,
            }),
          );
        }
      }
      return;
    }
    // A repair: Route 53 INSYNC, CloudFront Deployed and every repaired hostname answering — each a
    // wait with its own status message in the thread. (A mismatched target's old load balancer still
    // exists, so its name resolving says nothing: no NXDOMAIN wait here.)
    const targets: EdgeWaitTarget[] = [];
    for (const c of applied?.route53Changes ?? [])
      targets.unshift({
        kind: "route53-insync",
        changeId: c.changeId,
        zoneName: zoneNameOf(action, c.zoneId),
      });
    for (const id of applied?.distributions ?? [])
      targets.unshift({ kind: "cloudfront-deployed", distributionId: id });
    for (const host of action.hostnames)
      for (const path of config.edgeProbe.healthPaths)
        targets.push({ kind: "http-ok", url: `https://${host}${path}` });
    const unique = [...new Map(targets.map((t) => [JSON.stringify(t), t])).values()];
    for (const target of unique) {
      await enqueueEdgeWait(
        queues.waits,
        {
          target,
          cluster,
          channel: thread.channel,
          threadTs: thread.ts,
          ...(options.edgeWaits?.intervalMs !== undefined
            ? { intervalMs: options.edgeWaits.intervalMs }
            : {}),
          ...(options.edgeWaits?.maxIntervalMs !== undefined
            ? { maxIntervalMs: options.edgeWaits.maxIntervalMs }
            : {}),
          // The names answer only once CloudFront has deployed: give them CloudFront's deadline.
          ...(target.kind === "http-ok" && (applied?.distributions.length ?? 0) > 0
            ? { timeoutMs: 50 * 60_000 }
            : {}),
        },
        now(),
      );
    }
  };

  const workflow = new ApprovalWorkflow({
    store,
    policy,
    audit,
    kube: base.kube,
    enqueueExecution: executionEnqueuer(queues.actions, options.execution),
    now,
    approvalsRequired: config.approvalsRequired,
    requestTtlSeconds: config.requestTtlSeconds,
    deletionWindowSeconds: config.deletionWindowSeconds,
    notifier,
    log,
  });
  const services: CommandServices = {
    ...base,
    diagnosisDeadlineMs: base.diagnosisDeadlineMs ?? config.diagnosisDeadlineMs,
    approvals: { workflow, audit },
  };

  // First to notice: one leader among replicas watches namespaces and posts the
  // diagnosis of one stuck past the threshold to the watch channel.
  const watch = config.watch;
  const watcher =
    watch === undefined
      ? undefined
      : createWatcherService({
          redis,
          prefix,
          channel: watch.channel,
          thresholdMs: config.blockedAfterSeconds * 1000,
          leaseMs: watch.leaseMs,
          io:
            options.watcher?.io ??
            createNamespaceWatchIo(
              loadKubeConfig(config.kubeconfig !== undefined ? { path: config.kubeconfig } : undefined),
              { timeoutMs: config.kubeTimeoutMs },
            ),
          diagnose: (namespace) => diagnoseNamespace(services.kube, namespace, diagnoseOptions(services)),
          slack: slackWatcherClient(client),
          log,
          ...(options.watcher?.tuning !== undefined ? { tuning: options.watcher.tuning } : {}),
        });

  const workerSetup = { connection: redis, prefix: `${prefix}:bull`, ...options.worker };
  // A bot process only enqueues: its jobs run wherever a worker runs.
  const workers: Worker[] = [];
  if (role !== "bot") {
    workers.push(
      createActionsWorker(
        { ...workerSetup, concurrency: 4 },
        {
          store,
          signer,
          policy,
          kube: base.kube,
          audit,
          now,
          notifier,
          log,
          afterDone,
          scheduleGuardClose: async (data, delayMs) => {
            await enqueueGuardClose(queues.waits, data, delayMs);
          },
          guardSigner,
          ...(base.aws ? { aws: base.aws.port } : {}),
        },
        { sweep: () => workflow.sweep() },
      ),
      createWaitsWorker(
        { ...workerSetup, concurrency: 8 },
        {
          kube: base.kube,
          reporter: createSlackThreadReporter(client),
          describeBlockers: async (namespace) =>
            (await diagnoseNamespace(base.kube, namespace, { now })).blockers.map(
              (b) => `${b.kind} ${b.namespace}/${b.name} (${b.finalizers.join(", ")})`,
            ),
          deletionGuard: { kube: base.kube, audit, reporter: createSlackThreadReporter(client), now, log },
          ...(base.aws
            ? {
                afterGone: afterNamespaceGone(base.kube, base.aws, now, async (namespace, thread) => {
                  await enqueuePathRecheck(
                    queues.waits,
                    {
                      namespace,
                      channel: thread.channel,
                      threadTs: thread.threadTs,
                      ...(options.pathRecheck?.intervalMs !== undefined
                        ? { intervalMs: options.pathRecheck.intervalMs }
                        : {}),
                      ...(options.pathRecheck?.timeoutMs !== undefined
                        ? { timeoutMs: options.pathRecheck.timeoutMs }
                        : {}),
                    },
                    now(),
                  );
                }),
                pathRecheck: {
                  replan: replanNamespace(base.kube, base.aws, now),
                  reporter: createSlackThreadReporter(client),
                  now,
                  log,
                  record: auditObserver(audit, now),
                },
              }
            : {}),
          ...(base.aws
            ? {
                edge: {
                  aws: base.aws.port,
                  reporter: createSlackThreadReporter(client),
                  probe: createEdgeProbe({
                    resolvers: config.edgeProbe.resolvers,
                    ...(config.edgeProbe.httpVia !== undefined ? { httpVia: config.edgeProbe.httpVia } : {}),
                  }),
                  now,
                  log,
                  record: auditObserver(audit, now),
                },
              }
            : {}),
          now,
          log,
          posted,
          record: auditObserver(audit, now),
          // The namespace's wait ended: repaint what was posted about it (durably, on the notify queue).
          onFinished: async (data, result) => {
            const at = now();
            const repainted = [];
            for (const m of await namespaceMessages.list(data.cluster, data.namespace)) {
              // At the deadline the namespace is still stuck: its diagnosis cards stay as they are.
              if (result.outcome === "timed-out" && m.kind === NamespaceMessageKind.Diagnosis) continue;
              const blocks = m.blocks as KnownBlock[];
              const message =
                m.kind === NamespaceMessageKind.Watch
                  ? renderWatchFinished(data.namespace, blocks, result.outcome, at)
                  : renderDiagnosisGone(data.namespace, blocks, at);
              await queueMessageEdit(
                notifyQueue,
                { channel: m.channel, ts: m.ts, text: message.text, blocks: message.blocks },
                `${m.kind}:${result.outcome}`,
                options.notify?.job,
              );
              repainted.push(m);
            }
            await namespaceMessages.forget(data.cluster, data.namespace, repainted);
          },
        },
      ),
      createNotifyWorker(workerSetup, {
        current: (id) => store.get(id),
        slack: slackNotifier,
        isPermanent: (err) => !slackRetryVerdict(err).retry,
        edit: async (e) => {
          await retrying(
            () =>
              notifierClient.chat.update({
                channel: e.channel,
                ts: e.ts,
                text: e.text,
                blocks: e.blocks as KnownBlock[],
              }),
            slackRetryVerdict,
            { attempts: 3, budgetMs: 10_000 },
          );
        },
        log,
        posted,
      }),
    );
  }
  // The jobs running here now, with their lock tokens: what a stop that runs out of time hands back.
  const running = new Map<string, Job>();
  const runningKey = (job: Job): string => `${job.queueName}:${job.id ?? ""}`;
  for (const w of workers) {
    w.on("error", (err) => log.error({ err: { message: err.message } }, "worker error"));
    w.on("active", (job: Job) => running.set(runningKey(job), job));
    w.on("completed", (job: Job) => running.delete(runningKey(job)));
    w.on("failed", (job: Job | undefined) => {
      if (job !== undefined) running.delete(runningKey(job));
    });
  }

  /** The Slack app with its commands, buttons and forms (not for the worker role). */
  function createBotApp(): SlackApp {
    const afterPost = async (
      result: CommandResult,
      posted: { channel: string; ts: string },
    ): Promise<void> => {
      if (result.type !== "diagnosis" && result.type !== "watch") return;
      if (result.diagnosis.verdict === "not-found") return;
      const namespace = result.diagnosis.namespace;
      // The card as posted (the watch message adds one intro line above it): what a repaint keeps.
      const card = renderDiagnosisBlocks(result.diagnosis, { command: config.command });
      const kind = result.type === "watch" ? NamespaceMessageKind.Watch : NamespaceMessageKind.Diagnosis;
      // Recorded before the wait starts, so a wait that ends at its first check still repaints it.
      await namespaceMessages.record(cluster, {
        kind,
        namespace,
        channel: posted.channel,
        ts: posted.ts,
        blocks: card.blocks,
      });
      if (result.type !== "watch") return;
      const started = await startWait(namespace, posted);
      if (started.joined) {
        // One wait per namespace: point at the running one instead of a second status and "gone".
        await client.chat.update({
          channel: posted.channel,
          ts: posted.ts,
          ...renderWatchJoined(
            namespace,
            card,
            messageLink({ channel: started.channel, ts: started.threadTs }),
          ),
        });
      }
    };
    const slack = createSlackApp({
      config,
      channelGate,
      // One answer per event, whichever replica Slack's re-delivery reaches.
      eventClaims: redisEventClaims(redis, prefix),
      // The diagnosis deadline bounds reads; this bounds everything else a command waits on (Redis,
      // a write), so the requester always gets an answer.
      registry: boundedRegistry(
        defaultRegistry(config.command),
        config.diagnosisDeadlineMs + config.kubeTimeoutMs + 5_000,
      ),
      services,
      log,
      now,
      afterPost,
      // New requests, from the slash command as from every form, go through one posting path.
      postApprovalRequest: (client, request, scopeLog) =>
        postApprovalRequest(client, { workflow, now }, request, scopeLog),
    });
    // The diagnosis card's *Details* and *Check again*: read again, answered in the card's thread.
    registerDiagnosisActions(slack, {
      command: config.command,
      diagnose: (namespace) => diagnoseNamespace(services.kube, namespace, diagnoseOptions(services)),
    });
    registerApprovalActions(slack, {
      workflow,
      now,
      log,
      async createRemovalRequest(input) {
        const type = resolveResourceType(
          (await base.kube.discover()).resources,
          `${input.resource}.${groupOf(input.apiVersion)}`,
        );
        if (type.kind !== input.kind) {
          throw new UnstuckError(
            ErrorCode.BadInput,
            `${input.resource} is a ${type.kind}, not a ${input.kind}.`,
          );
        }
        return requestRemovalWithPlan(
          services,
          { workflow, audit },
          {
            type,
            namespace: input.namespace,
            name: input.name,
            ...(input.finalizer ? { finalizer: input.finalizer } : {}),
            reason: input.reason,
            ...(input.statements !== undefined ? { statements: input.statements } : {}),
            requester: input.requester,
            channelId: input.channelId,
          },
        );
      },
    });

    registerRepairActions(slack, {
      workflow,
      now,
      log,
      async requestRepair(input) {
        const made = await requestRepairWithPlan(services, { workflow, audit }, input);
        if (made.request) return made.request;
        throw new UnstuckError(
          ErrorCode.BadInput,
          `Nothing to repair on the traffic path of ${"namespace" in input.subject ? `namespace ${input.subject.namespace}` : input.subject.hostnames.join(", ")} now${made.plan.questions.length > 0 ? `: ${made.plan.questions.join(" ")}` : "."}`,
        );
      },
    });
    return slack;
  }
  const slack = role === "worker" ? undefined : createBotApp();

  /** Running jobs back to waiting, their locks released (a job already finished or lost is skipped). */
  const handBack = async (): Promise<void> => {
    await Promise.all(
      [...running.values()].map(async (job) => {
        if (job.token === undefined) return;
        try {
          await job.moveToWait(job.token);
          log.warn({ queue: job.queueName, jobId: job.id, job: job.name }, "job handed back on shutdown");
        } catch (err) {
          log.warn(
            { queue: job.queueName, jobId: job.id, err: { message: toUserError(err).message } },
            "could not hand a job back; it is re-run once its lock expires",
          );
        }
      }),
    );
  };

  // Closes deletion guards past their window on every worker, whatever became of the close job.
  let reconciler: GuardReconciler | undefined;
  let stopped = false;
  return {
    role,
    ...(slack !== undefined ? { slack } : {}),
    workflow,
    audit,
    queues,
    services,
    redis,
    ...(watcher !== undefined ? { watcher } : {}),
    async start() {
      watcher?.start();
      if (role !== "bot") await scheduleApprovalSweep(queues.actions, options.sweepEveryMs ?? 30_000);
      if (role !== "bot" && !stopped) {
        const g = options.guardReconcile;
        reconciler ??= startGuardReconciler(
          {
            kube: base.kube,
            signer: guardSigner,
            now,
            audit,
            log,
            ...(g?.graceMs !== undefined ? { graceMs: g.graceMs } : {}),
          },
          g?.everyMs !== undefined ? { everyMs: g.everyMs } : {},
        );
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
        await reconciler?.stop();
        await slack?.stop();
        await Promise.all(workers.map((w) => closeWorker(w)));
        await Promise.all([queues.close(), notifyQueue.close()]);
        // The discovery watches of the long-running kube adapter.
        await base.kube.close?.().catch(() => undefined);
        await redis.quit().catch(() => undefined);
      })();
      // The last part of the bound is kept for handing back what is still running.
      const reserve = Math.min(2_000, Math.floor(config.shutdownTimeoutMs / 4));
      const finished = await settlesWithin(graceful, config.shutdownTimeoutMs - reserve);
      if (finished) return;
      log.warn({ timeoutMs: config.shutdownTimeoutMs }, "graceful stop timed out; not waiting any longer");
      // Jobs still running: hand them back rather than leave them locked until their lock expires
      // (30 s) and a stalled check finds them. The executor re-reads the object before any write,
      // so the attempt that takes over resumes this one's work, never repeats a write blindly.
      await settlesWithin(handBack(), reserve);
      // A dependency hangs (a job stuck on the API server, Redis not answering): stop waiting for
      // it; the caller exits the process. A job that could not be handed back is re-run by BullMQ's
      // stalled check. The Redis connection is left to the graceful path, which still finishes
      // if Redis comes back: cutting it under BullMQ's workers makes their loops spin on the
      // closed connection instead of ending.
      for (const w of workers) void w.close(true).catch(() => undefined);
    },
  };
}

/** Whether `p` settles (either way) within `ms`. */
async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const done = p.then(
    () => true as const,
    () => true as const,
  );
  const result = await Promise.race([done, timedOut]);
  clearTimeout(timer);
  return result;
}

/**
 * The registry with a bound on each command: past it the requester is told that the command did
 * not finish, instead of hearing nothing. The command itself is not cancelled (its own timeouts end it).
 */
function boundedRegistry(registry: Registry, ms: number): Registry {
  return {
    ...registry,
    dispatch: async (text, ctx, prefix) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<CommandResult>((resolve) => {
        timer = setTimeout(() => {
          resolve({
            type: "error",
            error: {
              code: ErrorCode.Upstream,
              message: `No answer within ${Math.round(ms / 1000)} s: a dependency (Kubernetes, AWS or Redis) is not answering; try again later.`,
              details: { timedOut: true, timeoutMs: ms },
            },
          });
        }, ms);
      });
      try {
        return await Promise.race([registry.dispatch(text, ctx, prefix), late]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

function zoneNameOf(action: RepointPathAction, zoneId: string): string {
  const step = action.steps.find((s) => s.kind === "route53" && s.zoneId === zoneId);
  return step?.kind === "route53" ? step.zoneName : zoneId;
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}

/**
 * After a namespace is gone: the orphans its stacks left in AWS and the traffic path of every
 * hostname that reached it, as thread replies (plain text, bounded; the reporter escapes it).
 */
function afterNamespaceGone(
  kube: CommandServices["kube"],
  aws: NonNullable<CommandServices["aws"]>,
  now: () => Date,
  recheck: (namespace: string, thread: { channel: string; threadTs: string }) => Promise<void>,
): (
  namespace: string,
  thread: { readonly channel: string; readonly threadTs: string },
) => Promise<readonly (string | ThreadCard)[]> {
  const cap = (s: string): string => (s.length > 3500 ? `${s.slice(0, 3499)}…` : s);
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
        ? cap(`🧹 ${renderOrphansText(orphans.value)}`)
        : `🧹 Could not check orphans: ${toUserError(orphans.reason).message}`,
    );
    if (trace.status === "rejected") {
      out.push(`🛣️ Could not trace the traffic path: ${toUserError(trace.reason).message}`);
      return out;
    }
    // The traffic path as a card: what is stale now and, when a repair can be planned, *Fix the path*.
    out.push(renderTraceBlocks(trace.value.trace, trace.value.plan));
    const broken = trace.value.trace.paths.some((p) => p.verdict === "stale" || p.verdict === "mismatched");
    // Nothing to repoint to yet: watch for the controller to re-create the stack, then offer the repair.
    if (broken && trace.value.plan.action === undefined) await recheck(namespace, thread);
    return out;
  };
}

/** One re-trace for the path re-check wait: repairable (a plan exists), intact, or still waiting. */
function replanNamespace(
  kube: CommandServices["kube"],
  aws: NonNullable<CommandServices["aws"]>,
  now: () => Date,
): (namespace: string) => Promise<Replanned> {
  return async (namespace) => {
    const { trace, plan } = await planPathRepair(aws.port, kube, { namespace }, now, {
      ...(aws.cluster !== undefined ? { cluster: aws.cluster } : {}),
    });
    const broken = trace.paths.filter((p) => p.verdict === "stale" || p.verdict === "mismatched");
    const card = renderTraceBlocks(trace, plan);
    // The stack is back: check orphans again (docs/incident.md, step 11), now new and old are told apart.
    const followUps = async (): Promise<readonly string[]> => {
      const report = await collectOrphans(aws.port, kube, {
        namespace,
        ...(aws.cluster !== undefined ? { cluster: aws.cluster } : {}),
      });
      const text = `🧹 After the re-creation: ${renderOrphansText(report)}`;
      return [text.length > 3500 ? `${text.slice(0, 3499)}…` : text];
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
