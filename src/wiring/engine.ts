/**
 * The engine of one process, constructed: its keys, Redis, the approval store, audit log, policy and
 * workflow, the queues (a fleet's per cluster), the records the jobs and cards share, and the command
 * services. Both roles build it the same way; the runtime (`src/runtime.ts`) then adds the workers,
 * the watcher and the Slack app the role runs.
 */
import type { Queue } from "bullmq";
import type { ApprovalNotifier } from "../approvals/notifier.js";
import { ApprovalPolicy } from "../approvals/policy.js";
import { ApprovalSigner } from "../approvals/integrity.js";
import { ApprovalStore } from "../approvals/store.js";
import { ApprovalWorkflow, type ApprovalWorkflowDeps } from "../approvals/workflow.js";
import { DeletionGuardSigner } from "../approvals/deletion-guard-token.js";
import { AuditLog } from "../audit/log.js";
import type { CommandServices } from "../command-contract.js";
import type { Config, Role } from "../config.js";
import { ownClusterOf, processKeys } from "../trust/process-keys.js";
import type { ProcessKeys } from "../trust/keys.js";
import type { SealKeys } from "../trust/sealed.js";
import type { RedisConnection } from "../redis-connection.js";
import { createQueues, executionEnqueuer, type ExecutionRetry, type Queues } from "../jobs/queues.js";
import { createNotifyQueue, queuedNotifier, type NotifyRetry } from "../jobs/notify.js";
import { startNamespaceGone } from "../jobs/waits.js";
import { jobSeal, sealedWaits, type JobSeal, type WaitsQueue } from "../jobs/sealed-jobs.js";
import { RepairCards } from "../jobs/repair-cards.js";
import { NamespaceMessages } from "../jobs/namespace-messages.js";
import { redisPostLedger, type PostLedger } from "../jobs/post-once.js";
import type { Logger } from "../log.js";
import { createServices } from "../services.js";
import { ChannelGate } from "../slack/channel-gate.js";
import { createSlackAuditMirror, createSlackDirectory } from "../slack/notifier.js";
import { namespaceWaitStarter, type StartNamespaceWait } from "../app/namespace-wait.js";
import { connectRedis } from "./redis.js";
import { createSlackClients, requireSlack, type SlackClients } from "./slack-clients.js";
import { FleetQueues, fleetEnqueuer } from "./fleet.js";
import { FleetPresence } from "../fleet/presence.js";
import { RedisKeys } from "../redis/keys.js";

/** What the engine is built from: the runtime's options it reads. */
export interface EngineOptions {
  readonly config: Config;
  readonly log: Logger;
  readonly role: Role;
  readonly now: () => Date;
  readonly services?: Omit<CommandServices, "approvals">;
  readonly execution?: ExecutionRetry;
  readonly notify?: { readonly job?: NotifyRetry };
}

/** A fleet's queues per cluster and the workers' presence, where a fleet is configured. */
export interface FleetParts {
  readonly fleet: NonNullable<Config["fleet"]>;
  readonly queues: FleetQueues;
  readonly presence: FleetPresence;
  /** The cluster this process's workers serve (absent: the fleet's Slack-facing bot). */
  readonly ownCluster?: string;
}

export interface Engine extends SlackClients {
  readonly keys: ProcessKeys;
  readonly signer: ApprovalSigner;
  readonly guardSigner: DeletionGuardSigner;
  /** The ports without approvals, and with them. */
  readonly base: Omit<CommandServices, "approvals">;
  readonly services: CommandServices;
  readonly cluster: string;
  readonly redis: RedisConnection;
  readonly prefix: string;
  readonly store: ApprovalStore;
  readonly audit: AuditLog;
  readonly channelGate: ChannelGate;
  readonly policy: ApprovalPolicy;
  readonly workflow: ApprovalWorkflow;
  /** The workflow a fleet's worker plans with: it hands drafts back, only the bot files them. */
  readonly drafting: ApprovalWorkflow;
  readonly notifier: ApprovalNotifier;
  readonly fleet?: FleetParts;
  readonly queues: Queues;
  readonly notifyQueue: Queue;
  readonly namespaceMessages: NamespaceMessages;
  readonly repairCards: RepairCards;
  readonly posted: PostLedger;
  /** What this process seals with (its own key) and verifies with (every public key). */
  readonly seal: SealKeys;
  readonly waitSeal: JobSeal;
  readonly waits: WaitsQueue;
  readonly startWait: StartNamespaceWait;
}

/** The key this process signs its records and jobs with: its workers' where it runs them, else the bot's. */
export function ownSeal(keys: ProcessKeys): SealKeys {
  const key = keys.worker ?? keys.bot;
  return { ...(key !== undefined ? { key } : {}), keyring: keys.keyring };
}

/**
 * The engine, built in order: keys, ports, Redis, Slack clients, the approval records and policy, the
 * queues, the durable notifier, then the workflows over them.
 */
export async function createEngine(options: EngineOptions): Promise<Engine> {
  const { config, log, role, now } = options;
  const slackConfig = requireSlack(config, role);
  // The bot signs as the bot, a worker as its cluster; everyone verifies with every public key.
  const keys = processKeys(config, role);
  const base = options.services ?? createServices(config, log, now, { longRunning: true });
  const redis = await connectRedis(config, log);
  const clients = createSlackClients(slackConfig, log);
  const prefix = config.redisPrefix;
  const seal = ownSeal(keys);
  const approvals = approvalParts({ config, redis, keys, clients, log, now });
  const queued = engineQueues(config, redis, keys, seal, log);
  const { notifyQueue, notifier } = durableNotifier(redis, prefix, options.notify?.job);
  const { fleet, queues, waits } = queued;
  const { store, policy, audit } = approvals;
  const workflowDeps: ApprovalWorkflowDeps = {
    store,
    policy,
    audit,
    kube: base.kube,
    enqueueExecution:
      fleet !== undefined
        ? fleetEnqueuer(fleet.queues, fleet.fleet, options.execution)
        : executionEnqueuer(queues.actions, options.execution),
    ...(fleet?.ownCluster !== undefined ? { cluster: fleet.ownCluster } : {}),
    now,
    approvalsRequired: config.approvalsRequired,
    requestTtlSeconds: config.requestTtlSeconds,
    deletionWindowSeconds: config.deletionWindowSeconds,
    notifier,
    log,
  };
  const workflow = new ApprovalWorkflow(workflowDeps);
  return {
    ...clients,
    keys,
    ...approvals,
    guardSigner: guardSignerOf(config, keys),
    base,
    services: {
      ...base,
      diagnosisDeadlineMs: base.diagnosisDeadlineMs ?? config.diagnosisDeadlineMs,
      approvals: { workflow, audit },
    },
    redis,
    prefix,
    workflow,
    drafting: new ApprovalWorkflow({ ...workflowDeps, files: "bot" }),
    notifier,
    ...queued,
    notifyQueue,
    ...sharedRecords(redis, prefix, keys),
    seal,
    startWait: namespaceWaitStarter({
      start: (request) => startNamespaceGone(waits, request, now()),
      cluster: queued.cluster,
      config,
    }),
  };
}

/** What the approval records and policy are built from. */
interface ApprovalContext {
  readonly config: Config;
  readonly redis: RedisConnection;
  readonly keys: ProcessKeys;
  readonly clients: SlackClients;
  readonly log: Logger;
  readonly now: () => Date;
}

/** The approval store, audit log, channel gate and policy, with the signer the store seals with. */
function approvalParts(
  c: ApprovalContext,
): Pick<Engine, "signer" | "store" | "audit" | "channelGate" | "policy"> {
  const { config, redis, clients, log } = c;
  const prefix = config.redisPrefix;
  const signer = new ApprovalSigner(c.keys);
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
      ? { mirror: createSlackAuditMirror(clients.client, config.auditChannel) }
      : {}),
  });
  // Channel ids and name patterns (incident channels); one name cache for the listeners and the policy.
  const channelGate = new ChannelGate({
    ids: config.channels,
    patterns: config.channelPatterns,
    lookup: (id) => clients.client.conversations.info({ channel: id }).then((r) => r.channel?.name),
  });
  const policy = new ApprovalPolicy({
    channels: config.channels,
    channelGate,
    approvers: config.approvers,
    directory: createSlackDirectory(clients.client),
    now: c.now,
  });
  return { signer, store, audit, channelGate, policy };
}

/** This process's cluster and queues (a fleet's, per cluster), and the sealed waits queued on them. */
function engineQueues(
  config: Config,
  redis: RedisConnection,
  keys: ProcessKeys,
  seal: SealKeys,
  log: Logger,
): Pick<Engine, "cluster" | "fleet" | "queues" | "waitSeal" | "waits"> {
  const cluster = config.clusterName ?? "default";
  const fleet = fleetParts(config, redis, keys, log);
  // In a fleet each cluster has its own queues; this process's workers consume its cluster's only.
  const queues =
    fleet !== undefined
      ? fleet.queues.queues(fleet.ownCluster ?? fleet.fleet.clusters[0]?.name ?? cluster)
      : createQueues({ connection: redis, prefix: RedisKeys.bull(config.redisPrefix) });
  // What this process seals the waits it queues with (its key), and opens them with (the bot's, or
  // this cluster's workers'): a wait written straight into Redis runs nothing.
  const waitSeal = jobSeal(seal, ownClusterOf(config));
  const waits = sealedWaits(queues.waits, waitSeal);
  return { cluster, ...(fleet !== undefined ? { fleet } : {}), queues, waitSeal, waits };
}

/** The notify queue and the notifier over it: each edit and reply a job in Redis. */
function durableNotifier(
  redis: RedisConnection,
  prefix: string,
  job: NotifyRetry | undefined,
): Pick<Engine, "notifyQueue" | "notifier"> {
  // Each edit and reply is a job in Redis: a process that dies or a Slack outage loses none of them.
  const notifyQueue = createNotifyQueue(redis, RedisKeys.bull(prefix));
  const durable = queuedNotifier(notifyQueue, job);
  const notifier: ApprovalNotifier = {
    requestUpdated: (request) => durable.requestUpdated(request),
    threadReply: (request, text) => durable.threadReply(request, text),
  };
  return { notifyQueue, notifier };
}

/** The deletion guard's annotation is signed by this cluster's workers and verified as theirs. */
function guardSignerOf(config: Config, keys: ProcessKeys): DeletionGuardSigner {
  return new DeletionGuardSigner({
    cluster: ownClusterOf(config),
    keyring: keys.keyring,
    ...(keys.worker !== undefined ? { worker: keys.worker } : {}),
  });
}

/** A fleet's queues and presence, with the cluster this process serves; undefined outside a fleet. */
function fleetParts(
  config: Config,
  redis: RedisConnection,
  keys: ProcessKeys,
  log: Logger,
): FleetParts | undefined {
  const fleet = config.fleet;
  if (fleet === undefined) return undefined;
  const queues = new FleetQueues(redis, RedisKeys.bull(config.redisPrefix), log, {
    ...(keys.bot !== undefined ? { bot: keys.bot } : {}),
    keyring: keys.keyring,
  });
  return {
    fleet,
    queues,
    presence: new FleetPresence(redis, config.redisPrefix),
    ...(config.clusterName !== undefined ? { ownCluster: config.clusterName } : {}),
  };
}

/** The records the jobs, cards and threads share across processes, each sealed by its writer. */
function sharedRecords(
  redis: RedisConnection,
  prefix: string,
  keys: ProcessKeys,
): Pick<Engine, "namespaceMessages" | "repairCards" | "posted"> {
  return {
    // Every diagnosis card and "Watching…" message posted about a namespace, for its repaint.
    namespaceMessages: new NamespaceMessages(redis, prefix, {
      ...(keys.bot !== undefined ? { key: keys.bot } : keys.worker !== undefined ? { key: keys.worker } : {}),
      keyring: keys.keyring,
    }),
    // The traffic-path card each repair was asked from, so it loses its "Fix the path" button once the repair is made.
    repairCards: new RepairCards(redis, prefix, {
      ...(keys.bot !== undefined ? { key: keys.bot } : {}),
      keyring: keys.keyring,
    }),
    // Every thread reply and file a job posts, recorded: a job step that runs again posts nothing twice.
    posted: redisPostLedger(redis, prefix, { seal: ownSeal(keys) }),
  };
}
