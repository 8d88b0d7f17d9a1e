/**
 * Commands in a fleet: one Slack-facing bot, the clusters' credentials with their workers. The bot
 * answers what needs no cluster itself (help, approvals, audit, timeline: Redis only) and sends every
 * other command to the chosen cluster's workers, whose answer it renders as its own. The cluster is
 * `--cluster NAME`, else the channel's (`channels` in the clusters file), else the only one; an unknown
 * name or a cluster without a live worker is answered at once, never after the time bound.
 */
import type { CommandContext, CommandDispatcher } from "../command-contract.js";
import type { CommandResult, HelpEntry } from "../command-result.js";
import type { FleetConfig } from "../config/clusters.js";
import { ErrorCode, toUserError, UnstuckError } from "../errors.js";
import { takeClusterFlag } from "./cluster-flag.js";
import { presenceWords, type ClusterPresence } from "./presence.js";

/** A dispatcher that also takes the cluster a command is for (`--cluster`, taken out of the line). */
export interface ClusterDispatcher extends CommandDispatcher {
  dispatchOn(
    cluster: string | undefined,
    text: string,
    ctx: CommandContext,
    prefix?: string,
  ): Promise<CommandResult>;
}

function isClusterDispatcher(d: CommandDispatcher): d is ClusterDispatcher {
  return typeof (d as Partial<ClusterDispatcher>).dispatchOn === "function";
}

function errorResult(err: unknown): CommandResult {
  return { type: "error", error: toUserError(err) };
}

/**
 * How a surface runs a command line: `--cluster NAME` taken out, the rest dispatched on that cluster.
 * A single-cluster bot refuses the flag (it has no other cluster to send the command to).
 */
export async function dispatchLine(
  registry: CommandDispatcher,
  line: string,
  ctx: CommandContext,
  prefix?: string,
): Promise<CommandResult> {
  let flag: ReturnType<typeof takeClusterFlag>;
  try {
    flag = takeClusterFlag(line);
  } catch (err) {
    return errorResult(err);
  }
  if (isClusterDispatcher(registry)) return registry.dispatchOn(flag.cluster, flag.text, ctx, prefix);
  if (flag.cluster !== undefined) {
    return errorResult(
      new UnstuckError(
        ErrorCode.BadInput,
        `This bot serves one cluster, so there is no cluster "${flag.cluster}" to choose: \`--cluster\` is for a fleet (a clusters file listing several).`,
      ),
    );
  }
  return registry.dispatch(flag.text, ctx, prefix);
}

/** The cluster a command goes to, or why none can be chosen. */
export function chooseCluster(
  fleet: FleetConfig,
  named: string | undefined,
  channelId: string | undefined,
): string {
  const names = fleet.clusters.map((c) => c.name);
  if (named !== undefined) {
    if (names.includes(named)) return named;
    throw new UnstuckError(
      ErrorCode.BadInput,
      `Unknown cluster "${named}": this bot serves ${names.join(", ")}.`,
      { cluster: named, clusters: names },
    );
  }
  const mapped = fleet.clusters.find((c) => channelId !== undefined && c.channels.includes(channelId));
  if (mapped !== undefined) return mapped.name;
  if (names.length === 1 && names[0] !== undefined) return names[0];
  throw new UnstuckError(
    ErrorCode.BadInput,
    `Which cluster? This channel is mapped to none; add \`--cluster NAME\` (one of ${names.join(", ")}).`,
    { clusters: names },
  );
}

/** The error of a cluster nobody can run the command on now (none of its workers is alive). */
export function absentCluster(presence: ClusterPresence, now: Date): UnstuckError {
  return new UnstuckError(
    ErrorCode.Unreachable,
    `Cluster ${presence.cluster} has ${presenceWords(presence, now)}: nothing there can run this command now. Check its worker pods (UNSTUCK_CLUSTER_NAME=${presence.cluster}).`,
    {
      cluster: presence.cluster,
      ...(presence.lastSeen ? { lastSeen: presence.lastSeen.toISOString() } : {}),
    },
  );
}

export interface FleetDispatcherDeps {
  readonly fleet: FleetConfig;
  /** The bot's own (bounded) registry, for the verbs that need no cluster. */
  readonly local: CommandDispatcher;
  /** The verb a line names (the grammar's first word), `undefined` when it does not parse. */
  readonly verbOf: (text: string) => string | undefined;
  readonly presence: { status(cluster: string, now: Date): Promise<ClusterPresence> };
  /** Runs the line on a worker of the cluster and returns its answer (bounded by the command bound). */
  readonly remote: (
    cluster: string,
    text: string,
    ctx: CommandContext,
    prefix: string | undefined,
  ) => Promise<CommandResult>;
  readonly now: () => Date;
}

/** Verbs that read Redis only: the bot answers them itself, whichever cluster the channel has. */
export const BOT_VERBS: ReadonlySet<string> = new Set(["help", "approvals", "audit", "timeline"]);

/** The listing of the fleet's clusters, as one help entry. */
function clustersEntry(statuses: readonly ClusterPresence[], fleet: FleetConfig, now: Date): HelpEntry {
  return {
    usage: "clusters",
    summary: `Clusters of this fleet: ${statuses.map((s) => `${s.cluster} ${presenceWords(s, now)}`).join("; ")}.`,
    aliases: [],
    flags: [
      {
        flag: "--cluster NAME",
        description: `runs any command on that cluster (default: the channel's cluster${fleet.clusters.some((c) => c.channels.length > 0) ? ", as the clusters file maps it" : ""})`,
      },
    ],
    examples: [`ns myapp --cluster ${fleet.clusters[0]?.name ?? "NAME"}`],
  };
}

/** Which cluster answered a result, for what follows its post (the wait, the card's repaint). */
const answeredBy = new WeakMap<object, string>();

/** The cluster whose workers produced this result (`undefined`: the bot answered it itself). */
export function clusterOfResult(result: CommandResult): string | undefined {
  return answeredBy.get(result);
}

export function fleetDispatcher(deps: FleetDispatcherDeps): ClusterDispatcher {
  const statuses = (): Promise<ClusterPresence[]> =>
    Promise.all(deps.fleet.clusters.map((c) => deps.presence.status(c.name, deps.now())));
  const help = async (text: string, ctx: CommandContext, prefix?: string, only = false) => {
    const result = await deps.local.dispatch(text, ctx, prefix);
    if (result.type !== "help") return result;
    const entry = clustersEntry(await statuses(), deps.fleet, deps.now());
    return {
      ...result,
      help: { ...result.help, entries: only ? [entry] : [...result.help.entries, entry] },
    } satisfies CommandResult;
  };
  const dispatchOn: ClusterDispatcher["dispatchOn"] = async (named, text, ctx, prefix) => {
    try {
      const words = text.trim().toLowerCase().split(/\s+/);
      if (words[0] === "clusters" && words.length === 1) return await help("help", ctx, prefix, true);
      const verb = deps.verbOf(text);
      // A line that does not parse gets the registry's own error (and help), from the bot.
      if (verb === undefined || BOT_VERBS.has(verb)) {
        if (named !== undefined) chooseCluster(deps.fleet, named, undefined);
        return verb === "help" || text.trim() === ""
          ? await help(text, ctx, prefix)
          : await deps.local.dispatch(text, ctx, prefix);
      }
      const cluster = chooseCluster(deps.fleet, named, ctx.actor.channelId);
      const presence = await deps.presence.status(cluster, deps.now());
      if (presence.live === 0) throw absentCluster(presence, deps.now());
      const result = await deps.remote(cluster, text, ctx, prefix);
      answeredBy.set(result, cluster);
      return result;
    } catch (err) {
      return errorResult(err);
    }
  };
  return { dispatchOn, dispatch: (text, ctx, prefix) => dispatchOn(undefined, text, ctx, prefix) };
}
