/**
 * What the blockers' own story says, read through the `KubePort`: the namespace's Events about each
 * blocker, and the lines of its controllers' logs that name it. A controller is read once however
 * many blockers it owns; a log that cannot be read becomes a warning.
 */
import { toUserError } from "../errors.js";
import type { KubePort } from "../kube/port.js";
import type { DeploymentSnapshot, EventSnapshot, ObjectSnapshot } from "../kube/types.js";
import type { EarlyControllers } from "./controllers-collect.js";
import { mapLimit } from "../util/concurrency.js";
import { LastReads } from "../util/last-reads.js";
import { notedReads, readsOnce } from "../util/reads-once.js";
import { blockerKey } from "./analyze.js";
import { guessControllers, lookupFinalizer, matchControllers } from "./finalizers.js";
import { evidenceFromLogs } from "./logs.js";
import type { Evidence } from "./types.js";
import { compareText } from "../util/collate.js";

/** Bound on the blockers whose Events are read, so thousands of blockers still answer in time. */
const MAX_EVENT_BLOCKERS = 25;
/** The controllers whose logs one diagnosis reads, and how many lines of each pod's. */
const MAX_LOG_CONTROLLERS = 8;
const DEFAULT_TAIL_LINES = 500;

/** The namespace's Events, listed once beside the type lists, or why they could not be. */
export type EventsRead =
  | { readonly ok: true; readonly events: readonly EventSnapshot[] }
  | { readonly ok: false; readonly error: unknown };

/** How much of the controllers' logs is read and kept. */
export interface EvidenceOptions {
  /** Log lines read per controller pod (default 500). */
  readonly logTailLines?: number;
  /** Evidence lines kept per blocker from logs (default 5). */
  readonly maxLogEvidence?: number;
}

/** A controller Deployment and the blockers whose finalizers it owns. */
interface OwnedBy {
  readonly deployment: DeploymentSnapshot;
  readonly blockers: ObjectSnapshot[];
}

/** What the log reads share: where to read, what to keep, and where a failure is said. */
interface LogContext {
  readonly kube: KubePort;
  readonly namespace: string;
  readonly options: EvidenceOptions;
  readonly warnings: string[];
}

/** Evidence per blocker (by `blockerKey`): its Events first, then its controllers' log lines. */
export async function gatherEvidence(
  kube: KubePort,
  namespace: string,
  blockers: readonly ObjectSnapshot[],
  deployments: readonly DeploymentSnapshot[],
  events: EventsRead,
  options: EvidenceOptions,
  warnings: string[],
): Promise<Map<string, Evidence[]>> {
  const evidence = new Map<string, Evidence[]>();
  const add = (key: string, items: readonly Evidence[]): void => {
    evidence.set(key, [...(evidence.get(key) ?? []), ...items]);
  };
  const logJobs = [...controllersOfBlockers(blockers, deployments).values()].slice(0, MAX_LOG_CONTROLLERS);
  const eventTargets = blockers.slice(0, MAX_EVENT_BLOCKERS);
  if (blockers.length > eventTargets.length) {
    warnings.push(`Events were read for the first ${eventTargets.length} of ${blockers.length} blockers.`);
  }
  if (!events.ok && eventTargets.length > 0) {
    warnings.push(`Could not list events in ${namespace}: ${toUserError(events.error).message}`);
  }
  for (const [key, items] of eventEvidence(events, eventTargets)) add(key, items);
  await mapLimit(logJobs, 4, (job) => logEvidence({ kube, namespace, options, warnings }, job, add));
  return evidence;
}

/** One read of a controller's log: namespace, pod, container and the lines from its end. */
export type PodLogRead = Parameters<KubePort["podLog"]>;

/** The controllers' pod lists and logs of one diagnosis. */
export interface LogReads {
  /**
   * `kube` with each distinct pod list and log read made once: what {@link readLogsAhead} and
   * `again` asked for is what the evidence gets, answer or failure. It holds the logs it read.
   */
  readonly kube: KubePort;
  /**
   * Reads these logs now, through the same memo, before any pod list names them: the logs the last
   * diagnosis of the namespace read. A pod that is gone costs one refused read, never used.
   */
  again(reads: readonly PodLogRead[]): void;
  /** The logs read through `kube`, in the order first asked. */
  asked(): PodLogRead[];
}

export function logReadsOnce(kube: KubePort): LogReads {
  const once = readsOnce();
  const podLog = once("podLog", (namespace: string, pod: string, container: string, tail: number) =>
    kube.podLog(namespace, pod, container, tail),
  );
  const asked = notedReads<PodLogRead>();
  return {
    kube: {
      ...kube,
      listPods: once("listPods", (namespace: string, selector?: string) =>
        kube.listPods(namespace, selector),
      ),
      podLog: (...read: PodLogRead) => {
        asked.note("podLog", read, read);
        return podLog(...read);
      },
    },
    again: (reads) => {
      for (const read of reads) podLog(...read).catch(() => undefined);
    },
    asked: asked.all,
  };
}

/** What the last diagnosis of each namespace read of its controllers' logs (by namespace). */
export function lastLogReads(): LastReads<PodLogRead> {
  return new LastReads<PodLogRead>(() => true);
}

/**
 * The logs of the controllers the finalizer table names for the finalizers the namespace controller
 * reported, asked for as soon as their Deployments are read: beside the namespace's content rather
 * than after it. Through {@link logReadsOnce}, so that the evidence's own asks are answered from
 * here. A finalizer the table does not know is left for later: its controller is guessed from the
 * kinds of the blockers that hold it.
 */
export function readLogsAhead(kube: KubePort, early: EarlyControllers, options: EvidenceOptions): void {
  void early.read
    .then((r) => {
      if (!r.ok) return;
      const controllers = new Map<string, DeploymentSnapshot>();
      for (const f of early.finalizers) {
        const info = lookupFinalizer(f);
        if (info === undefined) continue;
        for (const d of matchControllers(info, r.deployments, f))
          controllers.set(`${d.namespace}/${d.name}`, d);
      }
      for (const d of [...controllers.values()].slice(0, MAX_LOG_CONTROLLERS))
        controllerLogs(kube, d, options.logTailLines ?? DEFAULT_TAIL_LINES).catch(() => undefined);
    })
    .catch(() => undefined);
}

/**
 * The controllers that own any blocker's finalizer, each with the blockers it owns. Thousands of
 * blockers share a handful of finalizers: each is matched to controllers once (`./finalizers.ts`).
 */
function controllersOfBlockers(
  blockers: readonly ObjectSnapshot[],
  deployments: readonly DeploymentSnapshot[],
): Map<string, OwnedBy> {
  const controllers = new Map<string, OwnedBy>();
  // By finalizer and kind, which is all an answer depends on: blockers share a handful of each.
  const asked = new Map<string, readonly DeploymentSnapshot[]>();
  const controllersOf = (f: string, b: ObjectSnapshot): readonly DeploymentSnapshot[] => {
    const key = `${f}\n${b.apiVersion}\n${b.kind}`;
    let found = asked.get(key);
    if (found === undefined) {
      const info = lookupFinalizer(f);
      found = info
        ? matchControllers(info, deployments, f)
        : guessControllers(f, b, deployments).map((g) => g.deployment);
      asked.set(key, found);
    }
    return found;
  };
  for (const b of blockers) {
    for (const f of b.finalizers) {
      for (const d of controllersOf(f, b)) {
        const key = `${d.namespace}/${d.name}`;
        const entry = controllers.get(key) ?? { deployment: d, blockers: [] };
        // Blockers come one at a time: a repeat (two finalizers, one controller) is the last one.
        if (entry.blockers[entry.blockers.length - 1] !== b) entry.blockers.push(b);
        controllers.set(key, entry);
      }
    }
  }
  return controllers;
}

/**
 * The newest five Events about each target, by the object they are about (what a field selector on
 * involvedObject.kind and .name would have asked the server for, per blocker).
 */
function eventEvidence(events: EventsRead, targets: readonly ObjectSnapshot[]): [string, Evidence[]][] {
  const about = new Map<string, EventSnapshot[]>();
  for (const e of events.ok ? events.events : []) {
    const key = `${e.involvedKind}/${e.involvedName}`;
    const list = about.get(key);
    if (list === undefined) about.set(key, [e]);
    else list.push(e);
  }
  const out: [string, Evidence[]][] = [];
  for (const b of targets) {
    const own = about.get(`${b.kind}/${b.name}`);
    if (own === undefined) continue;
    out.push([
      blockerKey(b),
      [...own]
        .sort((x, y) => compareText(y.lastTimestamp ?? "", x.lastTimestamp ?? ""))
        .slice(0, 5)
        .map((e) => ({
          source: "event" as const,
          from: `Event ${e.reason}${e.source ? ` (${e.source})` : ""}`,
          text: `${e.message}${e.count > 1 ? ` (×${e.count})` : ""}`,
          ...(e.lastTimestamp ? { time: e.lastTimestamp } : {}),
          error: e.type === "Warning",
        })),
    ]);
  }
  return out;
}

/** One controller's log lines that name each blocker it owns; a log that cannot be read is a warning. */
async function logEvidence(
  ctx: LogContext,
  { deployment, blockers }: OwnedBy,
  add: (key: string, items: readonly Evidence[]) => void,
): Promise<void> {
  try {
    const lines = await controllerLogs(ctx.kube, deployment, ctx.options.logTailLines ?? DEFAULT_TAIL_LINES);
    for (const b of blockers) {
      add(
        blockerKey(b),
        evidenceFromLogs(
          lines,
          { namespace: ctx.namespace, name: b.name, kind: b.kind, aliases: groupAliases(b) },
          ctx.options.maxLogEvidence ?? 5,
        ),
      );
    }
  } catch (err) {
    ctx.warnings.push(
      `Could not read logs of ${deployment.namespace}/${deployment.name}: ${toUserError(err).message}`,
    );
  }
}

/** The IngressGroup an Ingress belongs to: the controller logs the group's errors under its name. */
function groupAliases(b: ObjectSnapshot): string[] {
  const group = b.kind === "Ingress" ? b.annotations["alb.ingress.kubernetes.io/group.name"] : undefined;
  return group !== undefined ? [group] : [];
}

/** The tail of every ready-or-not pod of a controller Deployment, tagged with where it came from. */
async function controllerLogs(
  kube: KubePort,
  d: DeploymentSnapshot,
  tailLines: number,
): Promise<{ from: string; line: string }[]> {
  const selector = Object.entries(d.selector)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  if (selector === "") return [];
  const pods = (await kube.listPods(d.namespace, selector)).slice(0, 3);
  const out: { from: string; line: string }[] = [];
  const results = await mapLimit(pods, 3, async (p) => {
    const container =
      p.containers.find((c) => d.name.includes(c) || c.includes("controller")) ?? p.containers[0];
    if (!container) return [];
    const lines = await kube.podLog(p.namespace, p.name, container, tailLines);
    return lines.map((line) => ({ from: `${p.namespace}/${p.name}/${container}`, line }));
  });
  for (const r of results) {
    if (r.ok) out.push(...r.value);
    else throw r.error;
  }
  return out;
}
