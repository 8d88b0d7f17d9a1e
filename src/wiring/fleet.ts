/**
 * A fleet wired (`config.fleet`: one Slack-facing bot, per-cluster workers, one Redis). Each cluster
 * has its own queues (`actions@<cluster>`, `waits@<cluster>`, `commands@<cluster>`), consumed only by
 * that cluster's workers. The bot holds no cluster's credentials: a command, a form or a button that
 * reads a cluster becomes a call on that cluster's `commands` queue, signed by the bot (who asks, for
 * which cluster, once, until when: `src/fleet/calls.ts`), run by one of its workers with the same
 * registry and ports the CLI uses; the answer, signed by that cluster's workers for that very call,
 * comes back through BullMQ's events (bounded by the command bound). A change is planned by the worker
 * and filed by the bot as the person it verified: a worker never signs a request. Approved changes go
 * to the request's cluster's actions queue. Each worker process heartbeats its cluster's presence
 * (`src/fleet/presence.ts`). The bot's side (its dispatcher, forms and buttons) is in `./fleet-bot.ts`.
 */
import { randomUUID } from "node:crypto";
import { Queue, QueueEvents, UnrecoverableError, Worker, type Job } from "bullmq";
import { diagnoseOptions, requestRemovalWithPlan } from "../../commands/finalize.js";
import { defaultRegistry } from "../../commands/index.js";
import { planRepairOf, requestRepairWithPlan } from "../../commands/repoint.js";
import { boundedRegistry, commandBoundMs } from "../app/bounded-registry.js";
import { removalRequester, repairChecker, repairRequester, type RepairCheck } from "../app/requests.js";
import type { ApprovalRequest, RemovalRequestInput } from "../requests/model.js";
import type { EnqueueExecution, EnqueueOutcome, Filed } from "../approvals/workflow.js";
import type { AuditLog } from "../audit/log.js";
import type { CommandServices } from "../command-contract.js";
import type { Actor, CommandResult } from "../command-result.js";
import type { Config } from "../config.js";
import type { FleetConfig } from "../config/clusters.js";
import { diagnoseNamespace } from "../diagnosis/diagnose.js";
import type { NamespaceDiagnosis } from "../diagnosis/types.js";
import { ErrorCode, toUserError, UnstuckError } from "../errors.js";
import { FleetPresence } from "../fleet/presence.js";
import {
  openAnswer,
  openCall,
  sealAnswer,
  sealCall,
  type RemoteAnswer,
  type RemoteCall,
  type Sealed,
} from "../fleet/calls.js";
import type { Keyring, SigningKey } from "../trust/keys.js";
import {
  clusterQueueName,
  createQueues,
  openQueue,
  executionEnqueuer,
  QueueName,
  type ExecutionRetry,
  type Queues,
} from "../jobs/queues.js";
import type { RepairFormInput, RepairSubject } from "../traffic/repoint.js";
import type { Logger } from "../log.js";
import { outageOf } from "./redis-outage.js";
import type { RedisConnection } from "../redis-connection.js";
import { FleetKeys } from "../redis/keys.js";

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
    /** The bot's key (signs calls) and the keyring its answers are checked with; absent on a worker. */
    private readonly keys?: { readonly bot?: SigningKey; readonly keyring: Keyring },
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
      queue = openQueue(name, { connection: this.connection, prefix: this.prefix });
      this.commandQueues.set(cluster, queue);
    }
    return queue;
  }

  private commandQueue(cluster: string): { queue: Queue; events: QueueEvents } {
    let events = this.commandEvents.get(cluster);
    if (events === undefined) {
      const name = clusterQueueName(QueueName.Commands, cluster);
      events = new QueueEvents(name, { connection: this.connection, prefix: this.prefix });
      events.on("error", (err: Error) => {
        outageOf(this.connection, this.log).failed(`command answers of ${cluster}`, err);
      });
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

  /**
   * Run a call on one of the cluster's workers, signed by the bot; its value, or its error thrown as an
   * `UnstuckError`. An answer that is not that cluster's workers' answer to this very call is refused.
   */
  public async call(cluster: string, call: RemoteCall, timeoutMs: number): Promise<unknown> {
    const bot = this.keys?.bot;
    if (bot === undefined || this.keys === undefined) {
      throw new UnstuckError(
        ErrorCode.Config,
        "Only the bot sends calls to a cluster's workers: it holds no key here.",
        {
          variable: "UNSTUCK_BOT_SIGNING_KEY",
        },
      );
    }
    const { queue, events } = this.commandQueue(cluster);
    await events.waitUntilReady();
    const { envelope, sealed } = sealCall(bot, cluster, call, Date.now(), timeoutMs);
    const job = await queue.add(call.kind, sealed, {
      attempts: 1,
      removeOnComplete: { age: 600 },
      removeOnFail: { age: 3600 },
    });
    let returned: unknown;
    try {
      returned = await job.waitUntilFinished(events, timeoutMs);
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
    const opened = openAnswer(this.keys.keyring, envelope, returned);
    if (!opened.ok) {
      this.log.error({ cluster, remote: call.kind, why: opened.why }, "refused an answer from a cluster");
      throw new UnstuckError(
        ErrorCode.Upstream,
        `The answer from cluster ${cluster} was refused: ${opened.why}. Nothing was done with it; someone may be writing to the bot's Redis.`,
        { cluster, refused: true },
      );
    }
    const answer: RemoteAnswer = opened.answer;
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
  removalRequest(input: RemovalRequestInput): Promise<Filed>;
  repairRequest(input: RepairFormInput): Promise<Filed>;
  repairCheck(subject: RepairSubject): Promise<RepairCheck>;
  diagnose(namespace: string): Promise<NamespaceDiagnosis>;
}

/**
 * The handlers over this process's services, as the single-cluster bot runs them; on a fleet's worker
 * the services' workflow hands planned requests back as drafts for the bot to file.
 */
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

/** What a cluster's commands worker checks calls with and signs its answers with. */
export interface CommandsWorkerTrust {
  /** This cluster's workers' key: it signs every answer. */
  readonly worker: SigningKey;
  /** The bot's public keys among them: only the bot's calls run. */
  readonly keyring: Keyring;
  /** Claims a call's nonce for its one run; false when it was seen before (a replay). */
  readonly claimNonce: (nonce: string, ttlMs: number) => Promise<boolean>;
  /** Where a refused call is recorded. */
  readonly audit: Pick<AuditLog, "append">;
  readonly now: () => Date;
}

/** Claims each call's nonce once, in Redis, for as long as the call could still be run. */
export function redisNonceClaims(
  redis: Pick<RedisConnection, "set">,
  prefix: string,
  cluster: string,
): CommandsWorkerTrust["claimNonce"] {
  return async (nonce, ttlMs) =>
    (await redis.set(FleetKeys.callNonce(prefix, cluster, nonce), "1", "PX", Math.max(1, ttlMs), "NX")) ===
    "OK";
}

/**
 * The worker of a cluster's `commands` queue: each call run here once the bot's signature, the cluster,
 * the expiry and the nonce check out, its answer signed and returned (never thrown). A call that does
 * not check out runs nothing and is audited.
 */
export function createCommandsWorker(
  setup: CommandsWorkerSetup,
  handlers: RemoteHandlers,
  trust: CommandsWorkerTrust,
  log: Logger,
): Worker<unknown, Sealed> {
  const refuse = async (kind: string, why: string): Promise<never> => {
    log.warn({ cluster: setup.cluster, remote: kind, why }, "refused a call to this cluster");
    await trust.audit
      .append({
        at: trust.now().toISOString(),
        actor: { kind: "system", component: "fleet" },
        event: "remote.refused",
        requestId: "",
        action: kind,
        target: `cluster ${setup.cluster}`,
        result: why,
      })
      .catch(() => undefined);
    throw new UnrecoverableError(`call refused: ${why}`);
  };
  return new Worker<unknown, Sealed>(
    clusterQueueName(QueueName.Commands, setup.cluster),
    async (job: Job<unknown, Sealed>) => {
      const now = trust.now().getTime();
      const opened = openCall(trust.keyring, setup.cluster, job.data, now);
      if (!opened.ok) return refuse(job.name, opened.why);
      const { envelope } = opened;
      const { call } = envelope;
      if (!(await trust.claimNonce(envelope.nonce, envelope.expiresAt - now + 60_000))) {
        return refuse(call.kind, "its nonce was seen before: a replay of a call already run");
      }
      const scoped = log.child({ cluster: setup.cluster, remote: call.kind });
      const answer = async (): Promise<RemoteAnswer> => {
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
              throw new UnstuckError(ErrorCode.BadInput, "unknown remote call");
          }
        } catch (err) {
          const error = toUserError(err);
          if (error.code === ErrorCode.Internal) scoped.error({ err }, "remote call failed");
          return { ok: false, error };
        }
      };
      return sealAnswer(trust.worker, envelope, await answer());
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
