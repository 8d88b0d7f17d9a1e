/**
 * The workers of a worker process, wired: approved actions, the waits (namespace gone, edge, path
 * re-check, deletion-guard close) with the use cases that follow them, and the durable notifications.
 * Also the record of the jobs running here, which a stop that runs out of time hands back.
 */
import type { WebClient } from "@slack/web-api";
import type { Job, Queue, Worker } from "bullmq";
import { afterOutcome } from "../app/after-outcome.js";
import { repaintRepairedCard } from "../app/repair-card.js";
import {
  afterNamespaceGone,
  blockerLines,
  replanNamespace,
  repaintWhenFinished,
} from "../app/namespace-gone.js";
import type { StartNamespaceWait } from "../app/namespace-wait.js";
import type { RunningJob } from "../app/shutdown.js";
import type { RedisOutage } from "./redis-outage.js";
import type { DeletionGuardSigner } from "../approvals/deletion-guard-token.js";
import type { ApprovalSigner } from "../approvals/integrity.js";
import type { SealKeys } from "../trust/sealed.js";
import type { JobSeal, WaitsQueue } from "../jobs/sealed-jobs.js";
import type { ApprovalNotifier, RetryPolicy } from "../approvals/notifier.js";
import type { ApprovalPolicy } from "../approvals/policy.js";
import type { ApprovalStore } from "../approvals/store.js";
import type { ApprovalWorkflow } from "../approvals/workflow.js";
import { auditObserver } from "../audit/observe.js";
import type { AuditLog } from "../audit/log.js";
import type { CommandServices } from "../command-contract.js";
import type { Config } from "../config.js";
import { enqueueGuardClose } from "../jobs/deletion-guard.js";
import { startGuardReconciler, type GuardReconciler } from "../jobs/guard-reconcile.js";
import { enqueueEdgeWait, redisSharedChecks } from "../jobs/edge-waits.js";
import { coalescedReporter, type ThreadReporter } from "../jobs/waits.js";
import { sequencedReporter } from "../jobs/status-writer.js";
import type { NamespaceMessages } from "../jobs/namespace-messages.js";
import type { RepairCards } from "../jobs/repair-cards.js";
import {
  createNotifyWorker,
  queueMessageEdit,
  replyDelivered,
  replyRef,
  type NotifyRetry,
} from "../jobs/notify.js";
import { enqueuePathRecheck } from "../jobs/path-recheck.js";
import type { PostLedger } from "../jobs/post-once.js";
import type { Queues } from "../jobs/queues.js";
import { createActionsWorker, createWaitsWorker, type WorkerSetup } from "../jobs/workers.js";
import type { Logger } from "../log.js";
import { createEdgeProbe } from "../net/probe.js";
import type { RedisConnection } from "../redis-connection.js";
import {
  createSlackApprovalNotifier,
  createSlackThreadReporter,
  slackRetryVerdict,
} from "../slack/notifier.js";
import { slackAlreadyWatchedReply, slackMessageEditor, slackTraceCardOf } from "./slack-presenters.js";
import { RedisKeys } from "../redis/keys.js";

/** Approved actions run at once on one worker process. */
const ACTIONS_CONCURRENCY = 4;
/** Wait checks run at once on one worker process (a check is short; a wait holds no slot between checks). */
const WAITS_CONCURRENCY = 8;

export interface WorkersDeps {
  readonly config: Config;
  readonly redis: RedisConnection;
  readonly prefix: string;
  readonly cluster: string;
  /** In a fleet: the cluster whose queues these workers consume (`actions@<cluster>`, `waits@<cluster>`). */
  readonly fleetCluster?: string;
  readonly base: Omit<CommandServices, "approvals">;
  readonly store: ApprovalStore;
  readonly signer: ApprovalSigner;
  readonly guardSigner: DeletionGuardSigner;
  /** What these workers seal the jobs they hand on with (their cluster's key) and check seals with. */
  readonly seal: SealKeys;
  /** The seal of the waits these workers run and queue, and the waits queue that seals what is added. */
  readonly waitSeal: JobSeal;
  readonly waits: WaitsQueue;
  readonly policy: ApprovalPolicy;
  readonly audit: AuditLog;
  readonly workflow: ApprovalWorkflow;
  readonly notifier: ApprovalNotifier;
  readonly queues: Queues;
  readonly notifyQueue: Queue;
  readonly namespaceMessages: NamespaceMessages;
  readonly repairCards: RepairCards;
  readonly posted: PostLedger;
  readonly startWait: StartNamespaceWait;
  readonly client: WebClient;
  readonly notifierClient: WebClient;
  /** The waits' status messages' client: a few seconds of retries, rate-limited calls rejected. */
  readonly statusClient: WebClient;
  readonly now: () => Date;
  readonly log: Logger;
  /** Worker lock settings, path re-check and edge-wait timings, notification retries (tests shorten them). */
  readonly tuning: {
    readonly worker?: {
      readonly lockDuration?: number;
      readonly stalledInterval?: number;
    };
    readonly pathRecheck?: {
      readonly intervalMs?: number;
      readonly timeoutMs?: number;
    };
    readonly edgeWaits?: {
      readonly intervalMs?: number;
      readonly maxIntervalMs?: number;
    };
    readonly notify?: {
      readonly retry?: RetryPolicy;
      readonly job?: NotifyRetry;
    };
  };
}

export function createWorkers(d: WorkersDeps): Worker[] {
  const workerSetup: WorkerSetup = {
    connection: d.redis,
    prefix: RedisKeys.bull(d.prefix),
    ...d.tuning.worker,
  };
  const clusterSetup: WorkerSetup = {
    ...workerSetup,
    ...(d.fleetCluster !== undefined ? { cluster: d.fleetCluster } : {}),
  };
  // The waits' status messages, on a client that retries seconds, not minutes (a wait never stalls on
  // Slack): progress edits of one message close together collapse into one, and every edit is ordered
  // across processes, so a message never ends on progress older than what it showed.
  const statusReporter = coalescedReporter(
    sequencedReporter(createSlackThreadReporter(d.statusClient, d.log), d.redis, d.prefix, { log: d.log }),
    { log: d.log },
  );
  return [
    actionsWorker(d, clusterSetup),
    waitsWorker(d, clusterSetup, statusReporter),
    notifyWorker(d, workerSetup),
  ];
}

/** Approved changes: claimed, verified, executed once; what follows each outcome (`afterOutcome`). */
function actionsWorker(d: WorkersDeps, setup: WorkerSetup): Worker {
  const { config, base, audit, now, log, tuning } = d;
  return createActionsWorker(
    { ...setup, concurrency: ACTIONS_CONCURRENCY },
    {
      store: d.store,
      signer: d.signer,
      policy: d.policy,
      kube: base.kube,
      // A fleet's worker runs only its own cluster's requests, whatever reaches its queue.
      ...(d.fleetCluster !== undefined ? { cluster: d.fleetCluster } : {}),
      audit,
      now,
      notifier: d.notifier,
      log,
      afterDone: afterOutcome({
        kube: base.kube,
        startWait: d.startWait,
        enqueueEdgeWait: (request) => enqueueEdgeWait(d.waits, request, now()),
        replyDelivered: (requestId, event) => replyDelivered(d.notifyQueue, requestId, replyRef(event)),
        posted: d.posted,
        replyAlreadyWatched: slackAlreadyWatchedReply(d.client),
        cluster: d.cluster,
        healthPaths: config.edgeProbe.healthPaths,
        ...(tuning.edgeWaits !== undefined ? { edgeWaits: tuning.edgeWaits } : {}),
        repaintRepairCard: repaintRepairedCard({
          cards: d.repairCards,
          queueEdit: (edit, key) => queueMessageEdit(d.notifyQueue, d.seal, edit, key, tuning.notify?.job),
          now,
          log,
        }),
      }),
      scheduleGuardClose: async (data, delayMs) => {
        await enqueueGuardClose(d.waits, data, delayMs);
      },
      guardSigner: d.guardSigner,
      ...(base.aws ? { aws: base.aws.port } : {}),
    },
    { sweep: () => d.workflow.sweep() },
  );
}

/** The waits: a namespace gone, the edge after a repair, the path re-check, the deletion guard's close. */
function waitsWorker(d: WorkersDeps, setup: WorkerSetup, statusReporter: ThreadReporter): Worker {
  const { config, base, audit, now, log, tuning } = d;
  // The traffic-path cards these workers post (in a fleet, their buttons name this cluster).
  const traceCard = slackTraceCardOf(d.fleetCluster);
  return createWaitsWorker(
    { ...setup, concurrency: WAITS_CONCURRENCY },
    {
      seal: d.waitSeal,
      kube: base.kube,
      reporter: statusReporter,
      describeBlockers: blockerLines(base.kube, now),
      deletionGuard: {
        kube: base.kube,
        audit,
        reporter: createSlackThreadReporter(d.client, log),
        now,
        log,
      },
      ...(base.aws
        ? {
            afterGone: afterNamespaceGone({
              kube: base.kube,
              aws: base.aws,
              now,
              renderTrace: traceCard,
              enqueuePathRecheck: (request) => enqueuePathRecheck(d.waits, request, now()),
              ...(tuning.pathRecheck !== undefined ? { pathRecheck: tuning.pathRecheck } : {}),
            }),
            pathRecheck: {
              replan: replanNamespace({
                kube: base.kube,
                aws: base.aws,
                now,
                renderTrace: traceCard,
              }),
              reporter: sequencedReporter(createSlackThreadReporter(d.client, log), d.redis, d.prefix, {
                log,
              }),
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
              reporter: statusReporter,
              probe: createEdgeProbe({
                resolvers: config.edgeProbe.resolvers,
                ...(config.edgeProbe.httpVia !== undefined ? { httpVia: config.edgeProbe.httpVia } : {}),
              }),
              now,
              log,
              record: auditObserver(audit, now),
              // One look per target per interval, however many waits (on any replica) wait on it.
              shared: redisSharedChecks(d.redis, d.prefix, { seal: d.seal }),
            },
          }
        : {}),
      now,
      log,
      posted: d.posted,
      record: auditObserver(audit, now),
      // The namespace's wait ended: repaint what was posted about it (durably, on the notify queue).
      onFinished: repaintWhenFinished({
        messages: d.namespaceMessages,
        queueEdit: (edit, key) => queueMessageEdit(d.notifyQueue, d.seal, edit, key, tuning.notify?.job),
        now,
      }),
    },
  );
}

/** Durable Slack edits and replies of requests and waits, each a job until Slack took it. */
function notifyWorker(d: WorkersDeps, setup: WorkerSetup): Worker {
  // `current` lets every replica paint the stored state, never an older one it happens to hold.
  const slackNotifier = createSlackApprovalNotifier({
    client: d.notifierClient,
    now: d.now,
    log: d.log,
    // Each attempt paints what the signatures vouch for now; a record that stopped verifying keeps
    // the view the job verified (never the stored words).
    current: async (id) => {
      const view = await d.store.getVerified(id);
      return view === null ? null : view.ok ? view.request : undefined;
    },
    ...(d.tuning.notify?.retry !== undefined ? { retry: d.tuning.notify.retry } : {}),
  });
  return createNotifyWorker(setup, {
    current: (id) => d.store.getVerified(id),
    slack: slackNotifier,
    isPermanent: (err) => !slackRetryVerdict(err).retry,
    edit: slackMessageEditor(d.notifierClient, (id) => d.store.getVerified(id)),
    keyring: d.seal.keyring,
    log: d.log,
    posted: d.posted,
  });
}

/** The jobs running on these workers now, with their lock tokens; worker errors to the Redis outage record. */
export function trackRunning(workers: readonly Worker[], outage: RedisOutage): Iterable<RunningJob> {
  const running = new Map<string, Job>();
  const runningKey = (job: Job): string => `${job.queueName}:${job.id ?? ""}`;
  for (const w of workers) {
    w.on("error", (err) => {
      outage.failed(`worker ${w.name}`, err);
    });
    w.on("active", (job: Job) => running.set(runningKey(job), job));
    w.on("completed", (job: Job) => running.delete(runningKey(job)));
    w.on("failed", (job: Job | undefined) => {
      if (job !== undefined) running.delete(runningKey(job));
    });
  }
  return { [Symbol.iterator]: () => running.values() };
}

export interface ReconcilerDeps {
  readonly kube: CommandServices["kube"];
  readonly guardSigner: DeletionGuardSigner;
  readonly now: () => Date;
  readonly audit: AuditLog;
  readonly log: Logger;
  /** The deletion window (`UNSTUCK_DELETION_WINDOW_SECONDS`): an `until` further ahead is invalid. */
  readonly windowSeconds: number;
  /** Period and grace past `until` (tests shorten them). */
  readonly tuning?: { readonly everyMs?: number; readonly graceMs?: number } | undefined;
}

/** The deletion guard's reconcile loop a worker process runs on its own timer. */
export function startReconciler(d: ReconcilerDeps): GuardReconciler {
  const g = d.tuning;
  return startGuardReconciler(
    {
      kube: d.kube,
      signer: d.guardSigner,
      now: d.now,
      audit: d.audit,
      log: d.log,
      windowMs: d.windowSeconds * 1000,
      ...(g?.graceMs !== undefined ? { graceMs: g.graceMs } : {}),
    },
    g?.everyMs !== undefined ? { everyMs: g.everyMs } : {},
  );
}
