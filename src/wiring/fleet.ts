/**
 * A fleet wired (`config.fleet`: one Slack-facing bot, per-cluster workers, one Redis). Each cluster
 * has its own queues (`actions@<cluster>`, `waits@<cluster>`, `commands@<cluster>`), consumed only by
 * that cluster's workers. The bot holds no cluster's credentials: a command, a form or a button that
 * reads a cluster becomes a job on that cluster's `commands` queue, run by one of its workers with the
 * same registry and ports the CLI uses, and its serialisable answer comes back through BullMQ's
 * events (bounded by the command bound). Approved changes go to the request's cluster's actions queue.
 * Each worker process heartbeats its cluster's presence (`src/fleet/presence.ts`).
 */
import { randomUUID } from "node:crypto";
import { Queue, QueueEvents, UnrecoverableError, Worker, type Job } from "bullmq";
import { diagnoseOptions, requestRemovalWithPlan } from "../../commands/finalize.js";
import { defaultRegistry } from "../../commands/index.js";
import { planRepairOf, requestRepairWithPlan } from "../../commands/repoint.js";
import { boundedRegistry, commandBoundMs } from "../app/bounded-registry.js";
import { namespaceWaitStarter } from "../app/namespace-wait.js";
import {
  removalRequester,
  repairChecker,
  repairRequester,
  type RepairCheck,
  type RepairFormInput,
} from "../app/requests.js";
import type { ApprovalRequest, RemovalRequestInput } from "../approvals/types.js";
import type { EnqueueExecution, EnqueueOutcome } from "../approvals/workflow.js";
import type { Actor, CommandResult, CommandServices } from "../command-contract.js";
import type { Config, FleetConfig } from "../config.js";
import { diagnoseNamespace } from "../diagnosis/diagnose.js";
import type { NamespaceDiagnosis } from "../diagnosis/types.js";
import { ErrorCode, toUserError, UnstuckError, type ErrorDetails } from "../errors.js";
import {
  absentCluster,
  chooseCluster,
  fleetDispatcher,
  type ClusterDispatcher,
} from "../fleet/dispatcher.js";
import { FleetPresence } from "../fleet/presence.js";
import type { NamespaceMessages } from "../jobs/namespace-messages.js";
import {
  clusterQueueName,
  createQueues,
  executionEnqueuer,
  QueueName,
  type ExecutionRetry,
  type Queues,
} from "../jobs/queues.js";
import { startNamespaceGone } from "../jobs/waits.js";
import type { RepairSubject } from "../traffic/repoint.js";
import type { Logger } from "../log.js";
import type { RedisConnection } from "../redis-connection.js";

/** What a cluster's worker is asked to run for the bot. */
export type RemoteCall =
  | {
      readonly kind: "command";
      readonly text: string;
      readonly actor: Actor;
      readonly prefix?: string;
    }
  | { readonly kind: "removal-request"; readonly input: RemovalRequestInput }
  | { readonly kind: "repair-request"; readonly input: RepairFormInput }
  | { readonly kind: "repair-check"; readonly subject: RepairSubject }
  | { readonly kind: "diagnose"; readonly namespace: string };

interface RemoteJobData {
  readonly call: RemoteCall;
  /** Epoch ms past which nobody waits for the answer: a worker that takes the job later runs nothing. */
  readonly deadline: number;
}

/** The answer of a remote call: its value, or the user-facing error it ended with. */
type RemoteAnswer =
  | { readonly ok: true; readonly value: unknown }
  | {
      readonly ok: false;
      readonly error: { readonly code: ErrorCode; readonly message: string; readonly details: ErrorDetails };
    };

/** The heartbeat period of a worker process (its presence lives three of them). */
export const HEARTBEAT_EVERY_MS = 10_000;

/** The queues of every cluster, made on first use, and the calls the bot sends to their workers. */
export class FleetQueues {
  private readonly perCluster = new Map<string, Queues>();
  private readonly commandQueues = new Map<string, Queue>();
  private readonly commandEvents = new Map<string, QueueEvents>();

  public constructor(
    private readonly connection: RedisConnection,
    /** The BullMQ prefix (`<prefix>:bull`). */
    private readonly prefix: string,
    private readonly log: Logger,
  ) {}

  /** The actions and waits queues of one cluster. */
  public queues(cluster: string): Queues {
    let q = this.perCluster.get(cluster);
    if (q === undefined) {
      q = createQueues({ connection: this.connection, prefix: this.prefix, cluster });
      this.perCluster.set(cluster, q);
    }
    return q;
  }

  private commandsOf(cluster: string): Queue {
    let queue = this.commandQueues.get(cluster);
    if (queue === undefined) {
      const name = clusterQueueName(QueueName.Commands, cluster);
      queue = new Queue(name, { connection: this.connection, prefix: this.prefix });
      this.commandQueues.set(cluster, queue);
    }
    return queue;
  }

  private commandQueue(cluster: string): { queue: Queue; events: QueueEvents } {
    let events = this.commandEvents.get(cluster);
    if (events === undefined) {
      const name = clusterQueueName(QueueName.Commands, cluster);
      events = new QueueEvents(name, { connection: this.connection, prefix: this.prefix });
      events.on("error", (err: Error) =>
        this.log.warn({ err: { message: err.message }, cluster }, "command answers: connection error"),
      );
      this.commandEvents.set(cluster, events);
    }
    return { queue: this.commandsOf(cluster), events };
  }

  /** The queues of these clusters whose jobs `/metrics` counts: actions, waits and commands of each. */
  public counted(clusters: readonly string[]): Queue[] {
    return clusters.flatMap((c) => {
      const q = this.queues(c);
      return [q.actions, q.waits, this.commandsOf(c)];
    });
  }

  /** Listen for the answers of every cluster's workers now, so the first command does not wait for it. */
  public async listen(clusters: readonly string[]): Promise<void> {
    await Promise.all(clusters.map((c) => this.commandQueue(c).events.waitUntilReady()));
  }

  /** Run a call on one of the cluster's workers; its value, or its error thrown as an `UnstuckError`. */
  public async call(cluster: string, call: RemoteCall, timeoutMs: number): Promise<unknown> {
    const { queue, events } = this.commandQueue(cluster);
    await events.waitUntilReady();
    const data: RemoteJobData = { call, deadline: Date.now() + timeoutMs };
    const job = await queue.add(call.kind, data, {
      attempts: 1,
      removeOnComplete: { age: 600 },
      removeOnFail: { age: 3600 },
    });
    let answer: RemoteAnswer;
    try {
      answer = (await job.waitUntilFinished(events, timeoutMs)) as RemoteAnswer;
    } catch (err) {
      // Not taken yet: taken back, so no worker runs a command nobody waits for any more.
      await job.remove().catch(() => undefined);
      const timedOut = err instanceof Error && /timed out/i.test(err.message);
      throw new UnstuckError(
        ErrorCode.Upstream,
        timedOut
          ? `No answer from cluster ${cluster} within ${String(Math.round(timeoutMs / 1000))} s: its workers are alive but busy or stuck; try again later.`
          : `Cluster ${cluster}'s worker failed the command (${err instanceof Error ? err.message.slice(0, 200) : "unknown error"}).`,
        { cluster, ...(timedOut ? { timedOut: true, timeoutMs } : {}) },
      );
    }
    if (answer.ok) return answer.value;
    throw new UnstuckError(answer.error.code, answer.error.message, answer.error.details);
  }

  public async close(): Promise<void> {
    await Promise.all([
      ...[...this.perCluster.values()].map((q) => q.close()),
      ...[...this.commandQueues.values()].map((q) => q.close()),
      ...[...this.commandEvents.values()].map((e) => e.close()),
    ]);
  }
}

/**
 * The workflow's `enqueueExecution` in a fleet: the approved request goes to the actions queue of the
 * cluster it records (signed in its document). A request recording none (made before the fleet) runs
 * on the only cluster, or is refused by name.
 */
export function fleetEnqueuer(
  queues: FleetQueues,
  fleet: FleetConfig,
  retry?: ExecutionRetry,
): EnqueueExecution {
  return async (request: ApprovalRequest): Promise<EnqueueOutcome> => {
    const only = fleet.clusters.length === 1 ? fleet.clusters[0]?.name : undefined;
    const cluster = request.cluster ?? only;
    if (cluster === undefined || !fleet.clusters.some((c) => c.name === cluster)) {
      throw new UnstuckError(
        ErrorCode.Config,
        `Request ${request.id} ${cluster === undefined ? "records no cluster" : `is for cluster ${cluster}, which is not in UNSTUCK_CLUSTERS_FILE`}: no worker can run it.`,
        { requestId: request.id },
      );
    }
    return (await executionEnqueuer(queues.queues(cluster).actions, retry)(request)) ?? "added";
  };
}

/** What a cluster's worker runs for the bot, with its own ports (the registry the CLI uses too). */
export interface RemoteHandlers {
  command(text: string, actor: Actor, prefix: string | undefined): Promise<CommandResult>;
  removalRequest(input: RemovalRequestInput): Promise<ApprovalRequest>;
  repairRequest(input: RepairFormInput): Promise<ApprovalRequest>;
  repairCheck(subject: RepairSubject): Promise<RepairCheck>;
  diagnose(namespace: string): Promise<NamespaceDiagnosis>;
}

/** The handlers over this process's services (approvals included), as the single-cluster bot runs them. */
export function localHandlers(config: Config, services: CommandServices): RemoteHandlers {
  const registry = boundedRegistry(defaultRegistry(config.command), commandBoundMs(config));
  const approvals = services.approvals;
  const needApprovals = (): NonNullable<CommandServices["approvals"]> => {
    if (approvals === undefined)
      throw new UnstuckError(ErrorCode.Config, "This worker has no approval engine.");
    return approvals;
  };
  return {
    command: (text, actor, prefix) => registry.dispatch(text, { actor, services }, prefix),
    removalRequest: (input) =>
      removalRequester({
        kube: services.kube,
        requestRemoval: (i) => requestRemovalWithPlan(services, needApprovals(), i),
      })(input),
    repairRequest: (input) =>
      repairRequester({ requestRepair: (i) => requestRepairWithPlan(services, needApprovals(), i) })(input),
    repairCheck: (subject) => repairChecker({ planRepair: (s) => planRepairOf(services, s) })(subject),
    diagnose: (namespace) => diagnoseNamespace(services.kube, namespace, diagnoseOptions(services)),
  };
}

export interface CommandsWorkerSetup {
  readonly connection: RedisConnection;
  readonly prefix: string;
  readonly cluster: string;
  readonly concurrency?: number;
  readonly lockDuration?: number;
  readonly stalledInterval?: number;
}

/** The worker of a cluster's `commands` queue: each call run here, its answer returned (never thrown). */
export function createCommandsWorker(
  setup: CommandsWorkerSetup,
  handlers: RemoteHandlers,
  log: Logger,
): Worker<RemoteJobData, RemoteAnswer> {
  return new Worker<RemoteJobData, RemoteAnswer>(
    clusterQueueName(QueueName.Commands, setup.cluster),
    async (job: Job<RemoteJobData, RemoteAnswer>) => {
      const { call, deadline } = job.data;
      if (Date.now() > deadline) {
        // The bot has answered "no answer" already: running it now (a request!) would surprise everyone.
        throw new UnrecoverableError("taken after its deadline; not run");
      }
      const scoped = log.child({ cluster: setup.cluster, remote: call.kind });
      try {
        switch (call.kind) {
          case "command":
            return { ok: true, value: await handlers.command(call.text, call.actor, call.prefix) };
          case "removal-request":
            return { ok: true, value: await handlers.removalRequest(call.input) };
          case "repair-request":
            return { ok: true, value: await handlers.repairRequest(call.input) };
          case "repair-check":
            return { ok: true, value: await handlers.repairCheck(call.subject) };
          case "diagnose":
            return { ok: true, value: await handlers.diagnose(call.namespace) };
          default:
            throw new UnrecoverableError(`unknown remote call "${job.name}"`);
        }
      } catch (err) {
        if (err instanceof UnrecoverableError) throw err;
        const error = toUserError(err);
        if (error.code === ErrorCode.Internal) scoped.error({ err }, "remote call failed");
        return { ok: false, error };
      }
    },
    {
      connection: setup.connection,
      prefix: setup.prefix,
      concurrency: setup.concurrency ?? 8,
      ...(setup.lockDuration !== undefined ? { lockDuration: setup.lockDuration } : {}),
      ...(setup.stalledInterval !== undefined ? { stalledInterval: setup.stalledInterval } : {}),
      // A command is a read or a request: never run twice after a stall.
      maxStalledCount: 0,
    },
  );
}

/** A worker process's presence in its cluster: a beat now and every `everyMs`, taken out on stop. */
export function startHeartbeat(
  presence: FleetPresence,
  cluster: string,
  opts: { readonly everyMs: number; readonly now: () => Date; readonly log: Logger },
): { stop(): Promise<void> } {
  const worker = randomUUID();
  const ttl = opts.everyMs * 3;
  const beat = (): void => {
    presence.beat(cluster, worker, ttl, opts.now()).catch((err: unknown) => {
      opts.log.warn(
        { err: { message: err instanceof Error ? err.message : String(err) } },
        "fleet heartbeat failed",
      );
    });
  };
  beat();
  const timer = setInterval(beat, opts.everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await presence.leave(cluster, worker, opts.now()).catch(() => undefined);
    },
  };
}

export interface BotFleetDeps {
  readonly config: Config;
  readonly fleet: FleetConfig;
  readonly queues: FleetQueues;
  readonly presence: FleetPresence;
  readonly namespaceMessages: NamespaceMessages;
  /** The bot's own registry: what it answers itself (help, approvals, audit, timeline) and how lines parse. */
  readonly local: {
    dispatch: ClusterDispatcher["dispatch"];
    parse(text: string): { command: { syntax: { path: readonly string[] } } };
  };
  readonly now: () => Date;
}

/** The bot's side of a fleet: its dispatcher, the forms and buttons sent to a cluster, and each cluster's wait. */
export interface BotFleet {
  readonly registry: ClusterDispatcher;
  /**
   * The forms and buttons of a card, each run on `cluster`: the one the card's button names (validated
   * against the clusters file), else, for a button posted without it, the one guessed as before.
   */
  readonly createRemovalRequest: (input: RemovalRequestInput, cluster?: string) => Promise<ApprovalRequest>;
  readonly requestRepair: (input: RepairFormInput, cluster?: string) => Promise<ApprovalRequest>;
  /** Whether a *Fix the path* can still repair anything, planned on the cluster the button names. */
  readonly checkRepair: (
    subject: RepairSubject,
    cluster?: string,
    channelId?: string,
  ) => Promise<RepairCheck>;
  readonly diagnose: (namespace: string, cluster?: string, channelId?: string) => Promise<NamespaceDiagnosis>;
  /** The cluster whose workers produced a diagnosis `diagnose` returned. */
  readonly clusterOf: (diagnosis: NamespaceDiagnosis) => string | undefined;
  /** The namespace wait on a cluster's waits queue. */
  readonly startWaitOn: (cluster: string) => ReturnType<typeof namespaceWaitStarter>;
}

export function botFleet(d: BotFleetDeps): BotFleet {
  const { fleet, queues, presence, now, config } = d;
  const boundMs = commandBoundMs(config);
  const live = async (cluster: string): Promise<string> => {
    const p = await presence.status(cluster, now());
    if (p.live === 0) throw absentCluster(p, now());
    return cluster;
  };
  /**
   * The cluster a button or form about a namespace is for when the button names none (posted before
   * buttons named their cluster): the one whose answer about it was posted in this channel (recorded
   * for the repaint), else the channel's cluster.
   */
  const clusterOfNamespace = async (namespace: string, channelId: string | undefined): Promise<string> => {
    const posted: string[] = [];
    for (const c of fleet.clusters) {
      const messages = await d.namespaceMessages.list(c.name, namespace);
      if (messages.some((m) => channelId === undefined || m.channel === channelId)) posted.push(c.name);
    }
    if (posted.length === 1 && posted[0] !== undefined) return posted[0];
    return chooseCluster(fleet, undefined, channelId);
  };
  const registry = fleetDispatcher({
    fleet,
    local: d.local,
    verbOf: (text) => {
      try {
        return d.local.parse(text).command.syntax.path[0];
      } catch {
        return undefined;
      }
    },
    presence,
    remote: async (cluster, text, ctx, prefix) =>
      (await queues.call(
        cluster,
        { kind: "command", text, actor: ctx.actor, ...(prefix !== undefined ? { prefix } : {}) },
        boundMs,
      )) as CommandResult,
    now,
  });
  /** The cluster a button names, when it is one of the fleet's (a name the file no longer has is refused). */
  const named = (cluster: string | undefined): string | undefined =>
    cluster !== undefined ? chooseCluster(fleet, cluster, undefined) : undefined;
  /** The live cluster a *Fix the path* (its check or its form) runs on. */
  const clusterOfRepair = async (
    subject: RepairSubject,
    button: string | undefined,
    channelId: string | undefined,
  ): Promise<string> =>
    live(
      named(button) ??
        ("namespace" in subject
          ? await clusterOfNamespace(subject.namespace, channelId)
          : chooseCluster(fleet, undefined, channelId)),
    );
  const diagnosed = new WeakMap<object, string>();
  return {
    registry,
    createRemovalRequest: async (input, button) => {
      const cluster = await live(
        named(button) ?? (await clusterOfNamespace(input.namespace, input.channelId)),
      );
      return (await queues.call(cluster, { kind: "removal-request", input }, boundMs)) as ApprovalRequest;
    },
    requestRepair: async (input, button) => {
      const cluster = await clusterOfRepair(input.subject, button, input.channelId);
      return (await queues.call(cluster, { kind: "repair-request", input }, boundMs)) as ApprovalRequest;
    },
    checkRepair: async (subject, button, channelId) => {
      const cluster = await clusterOfRepair(subject, button, channelId);
      return (await queues.call(cluster, { kind: "repair-check", subject }, boundMs)) as RepairCheck;
    },
    diagnose: async (namespace, button, channelId) => {
      const cluster = await live(named(button) ?? (await clusterOfNamespace(namespace, channelId)));
      const d = (await queues.call(cluster, { kind: "diagnose", namespace }, boundMs)) as NamespaceDiagnosis;
      diagnosed.set(d, cluster);
      return d;
    },
    clusterOf: (d) => diagnosed.get(d),
    startWaitOn: (cluster) =>
      namespaceWaitStarter({
        start: (request) => startNamespaceGone(queues.queues(cluster).waits, request, now()),
        cluster,
        config,
      }),
  };
}
