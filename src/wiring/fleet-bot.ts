/**
 * The bot's side of a fleet (`src/wiring/fleet.ts` has the queues and the workers' side): its
 * dispatcher, which sends a command that reads a cluster to that cluster's workers and files the plan
 * they answer a change with; the forms and buttons of a card, each run on the cluster it names; and the
 * namespace wait on each cluster's waits queue, sealed with the bot's key.
 */
import { commandBoundMs } from "../app/bounded-registry.js";
import { namespaceWaitStarter } from "../app/namespace-wait.js";
import type { RepairCheck } from "../app/requests.js";
import type { Filed } from "../approvals/workflow.js";
import type { CommandContext } from "../command-contract.js";
import type { CommandResult } from "../command-result.js";
import type { Config } from "../config.js";
import type { FleetConfig } from "../config/clusters.js";
import type { NamespaceDiagnosis } from "../diagnosis/types.js";
import { ErrorCode, UnstuckError } from "../errors.js";
import {
  absentCluster,
  chooseCluster,
  fleetDispatcher,
  type ClusterDispatcher,
} from "../fleet/dispatcher.js";
import type { FleetPresence } from "../fleet/presence.js";
import type { NamespaceMessages } from "../jobs/namespace-messages.js";
import { sealedWaits, type JobSeal } from "../jobs/sealed-jobs.js";
import { startNamespaceGone } from "../jobs/waits.js";
import type { ApprovalRequest, Identity, RemovalRequestInput, RequestDraft } from "../requests/model.js";
import type { RepairFormInput, RepairSubject } from "../traffic/repoint.js";
import type { FleetQueues } from "./fleet.js";

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
  /** The seal of the waits the bot queues on a cluster (its own key; the cluster's workers open it). */
  readonly waitSeal: (cluster: string) => JobSeal;
  /**
   * Files a draft a cluster's worker planned, as the person the bot verified, for that cluster (the
   * workflow's `fileDraft`): a request is signed by the bot only.
   */
  readonly file: (
    draft: RequestDraft,
    requester: Identity,
    channelId: string,
    cluster: string,
  ) => Promise<ApprovalRequest>;
}

/** A worker's answer to a change: a draft, which the bot files; anything else is refused. */
function draftOf(value: unknown, cluster: string): RequestDraft {
  const filed = value as Partial<Filed> | null;
  if (filed?.kind === "draft" && typeof filed.draft === "object") return filed.draft;
  throw new UnstuckError(
    ErrorCode.Upstream,
    `Cluster ${cluster}'s workers answered a change with something other than a plan to file; refused: only the bot files requests.`,
    { cluster, refused: true },
  );
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

/** The bot's side of a fleet: its dispatcher, the cards' forms and buttons, and each cluster's wait. */
export function botFleet(d: BotFleetDeps): BotFleet {
  const c: FleetContext = { ...d, boundMs: commandBoundMs(d.config) };
  const { queues, boundMs } = c;
  const diagnosed = new WeakMap<object, string>();
  return {
    registry: fleetRegistry(c),
    createRemovalRequest: async (input, button) => {
      const cluster = await live(
        c,
        named(c.fleet, button) ?? (await clusterOfNamespace(c, input.namespace, input.channelId)),
      );
      const draft = draftOf(await queues.call(cluster, { kind: "removal-request", input }, boundMs), cluster);
      return d.file(draft, input.requester, input.channelId, cluster);
    },
    requestRepair: async (input, button) => {
      const cluster = await clusterOfRepair(c, input.subject, button, input.channelId);
      const draft = draftOf(await queues.call(cluster, { kind: "repair-request", input }, boundMs), cluster);
      return d.file(draft, input.requester, input.channelId, cluster);
    },
    checkRepair: async (subject, button, channelId) => {
      const cluster = await clusterOfRepair(c, subject, button, channelId);
      return (await queues.call(cluster, { kind: "repair-check", subject }, boundMs)) as RepairCheck;
    },
    diagnose: async (namespace, button, channelId) => {
      const cluster = await live(
        c,
        named(c.fleet, button) ?? (await clusterOfNamespace(c, namespace, channelId)),
      );
      const d = (await queues.call(cluster, { kind: "diagnose", namespace }, boundMs)) as NamespaceDiagnosis;
      diagnosed.set(d, cluster);
      return d;
    },
    clusterOf: (d) => diagnosed.get(d),
    startWaitOn: (cluster) =>
      namespaceWaitStarter({
        // Sealed with the bot's key: the cluster's workers run a wait only when it verifies.
        start: (request) =>
          startNamespaceGone(
            sealedWaits(queues.queues(cluster).waits, d.waitSeal(cluster)),
            request,
            c.now(),
          ),
        cluster,
        config: c.config,
      }),
  };
}

/** What the bot's side of a fleet works with: its deps and the bound of a call to a cluster. */
interface FleetContext extends BotFleetDeps {
  readonly boundMs: number;
}

/** The cluster, when one of its workers is live; otherwise the error saying since when none is. */
async function live(c: FleetContext, cluster: string): Promise<string> {
  const p = await c.presence.status(cluster, c.now());
  if (p.live === 0) throw absentCluster(p, c.now());
  return cluster;
}

/**
 * The cluster a button or form about a namespace is for when the button names none (posted before
 * buttons named their cluster): the one whose answer about it was posted in this channel (recorded
 * for the repaint), else the channel's cluster.
 */
async function clusterOfNamespace(
  c: FleetContext,
  namespace: string,
  channelId: string | undefined,
): Promise<string> {
  const posted: string[] = [];
  for (const cluster of c.fleet.clusters) {
    const messages = await c.namespaceMessages.list(cluster.name, namespace);
    if (messages.some((m) => channelId === undefined || m.channel === channelId)) posted.push(cluster.name);
  }
  if (posted.length === 1 && posted[0] !== undefined) return posted[0];
  return chooseCluster(c.fleet, undefined, channelId);
}

/** The cluster a button names, when it is one of the fleet's (a name the file no longer has is refused). */
function named(fleet: FleetConfig, cluster: string | undefined): string | undefined {
  return cluster !== undefined ? chooseCluster(fleet, cluster, undefined) : undefined;
}

/** The live cluster a *Fix the path* (its check or its form) runs on. */
async function clusterOfRepair(
  c: FleetContext,
  subject: RepairSubject,
  button: string | undefined,
  channelId: string | undefined,
): Promise<string> {
  return live(
    c,
    named(c.fleet, button) ??
      ("namespace" in subject
        ? await clusterOfNamespace(c, subject.namespace, channelId)
        : chooseCluster(c.fleet, undefined, channelId)),
  );
}

/** The bot's dispatcher: its own commands here, every other one on the cluster it reads. */
function fleetRegistry(c: FleetContext): ClusterDispatcher {
  return fleetDispatcher({
    fleet: c.fleet,
    local: c.local,
    verbOf: (text) => {
      try {
        return c.local.parse(text).command.syntax.path[0];
      } catch {
        return undefined;
      }
    },
    presence: c.presence,
    remote: (cluster, text, ctx, prefix) => remoteCommand(c, cluster, text, ctx, prefix),
    now: c.now,
  });
}

/**
 * A command run on one of the cluster's workers. A change comes back as a plan, filed here as the
 * person whose command it was; a request the workers made themselves is refused.
 */
async function remoteCommand(
  c: FleetContext,
  cluster: string,
  text: string,
  ctx: CommandContext,
  prefix: string | undefined,
): Promise<CommandResult> {
  const result = (await c.queues.call(
    cluster,
    { kind: "command", text, actor: ctx.actor, ...(prefix !== undefined ? { prefix } : {}) },
    c.boundMs,
  )) as CommandResult;
  // A change comes back as a plan: filed here, as the person whose command it was.
  if (result.type === "approval-draft") {
    const requester = { userId: ctx.actor.userId, teamId: ctx.actor.teamId };
    const request = await c.file(result.draft, requester, ctx.actor.channelId ?? "", cluster);
    return { type: "approval-request", request } satisfies CommandResult;
  }
  if (result.type === "approval-request") {
    throw new UnstuckError(
      ErrorCode.Upstream,
      `Cluster ${cluster}'s workers answered with a request they made themselves; refused: only the bot files requests.`,
      { cluster, refused: true },
    );
  }
  return result;
}
