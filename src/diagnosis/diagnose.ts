/**
 * Collects what `analyzeNamespace` needs through the injected `KubePort` — the namespace first
 * (a live one costs nothing more), then what is left in it: only the types the namespace
 * controller's own report names when that report can be trusted, every namespaced listable type
 * otherwise (metadata only, in parallel, bounded) — the controllers of the finalizers found, their
 * logs and the blockers' events — and hands the snapshots to the pure analysis. A part that cannot
 * be read becomes a warning; the rest of the diagnosis still appears. */
import { singleFlight, type SingleFlight } from "../util/single-flight.js";
import type { DiagnosisAwsReads } from "../aws/port.js";
import { ErrorCode, isUnstuckError, UnstuckError, toUserError } from "../errors.js";
import { DEFAULT_KUBE_CONCURRENCY } from "../kube/limiter.js";
import type { KubePort } from "../kube/port.js";
import { edgeOwnerOf, type EdgeOwner } from "../edge/model.js";
import type {
  DeploymentSnapshot,
  EventSnapshot,
  NamespaceSnapshot,
  ObjectSnapshot,
  ResourceType,
} from "../kube/types.js";
import {
  heldByFinalizers,
  type ApiServiceSnapshot,
  type DiscoveryFailure,
  type DiscoverySnapshot,
} from "../kube/types.js";
import { mapLimit } from "../util/concurrency.js";
import { analyzeNamespace, blockerKey, resourceLabel } from "./analyze.js";
import type { ListedType } from "./causes/rule.js";
import { nearestNames } from "../util/similar.js";
import type { AwsFindings } from "./aws.js";
import { collectAwsForBlocker } from "./aws-collect.js";
import { collectCauses } from "./causes-collect.js";
import { guessControllers, lookupFinalizer, matchControllers } from "./finalizers.js";
import { DEFAULT_DIAGNOSIS_DEADLINE_MS, startDiagnosisDeadline } from "./deadline.js";
import { clusterNameFromArgs } from "../edge/lbc-names.js";
import { evidenceFromLogs } from "./logs.js";
import { checkReport, readControllerReport, reportLabel } from "./controller-report.js";
import type {
  ContentScan,
  DiscoveryFailureFinding,
  Evidence,
  ForbiddenType,
  NamespaceDiagnosis,
  ScanFallback,
} from "./types.js";

export interface DiagnoseOptions {
  readonly now: () => Date;
  /** Terminating longer than this with finalizers left = blocked (default 300 s). */
  readonly blockedAfterSeconds?: number;
  /** Parallel list requests (default the adapter's own bound across diagnoses, 64). */
  readonly concurrency?: number;
  /** Log lines read per controller pod (default 500). */
  readonly logTailLines?: number;
  /** Evidence lines kept per blocker from logs (default 5). */
  readonly maxLogEvidence?: number;
  /**
   * Look into AWS for Load Balancer Controller finalizers. `cluster` is the EKS cluster name the
   * controller tags with; when absent it is read from the controller's `--cluster-name`.
   */
  readonly aws?: { readonly port: DiagnosisAwsReads; readonly cluster?: string };
  /**
   * Overall bound (default 20 s): after it, reads still waiting are given up, named in the
   * warnings, and the diagnosis returns what it has.
   */
  readonly deadlineMs?: number;
}

/** Bounds on per-blocker reads, so a namespace with thousands of blockers still answers in time. */
const MAX_AWS_BLOCKERS = 5;
const MAX_EVENT_BLOCKERS = 25;

/** Groups whose objects are the same as another group's (listing both would double-count). */
const DUPLICATE_GROUPS = new Set(["events.k8s.io"]);

/**
 * Types whose bodies are secrets. The adapter lists every type metadata only
 * (`PartialObjectMetadataList`), but RBAC authorizes the verb, not the representation: the `list`
 * this needs would return every Secret's data to a request for the full form, and even metadata can
 * carry it (`kubectl.kubernetes.io/last-applied-configuration` of an applied Secret). So the
 * diagnosis reads them only when the namespace's `NamespaceContentRemaining` condition names them
 * (or says nothing), and a chart installed with `rbac.readScope=explicit` can leave the grant out.
 */
const BODY_SENSITIVE = new Set(["/secrets"]);

/**
 * Whether the namespace may still hold objects of `type`, by its own `NamespaceContentRemaining`
 * condition (the namespace controller's last count, e.g. `Some resources are remaining: secrets.
 * has 2 resource instances`). A Terminating namespace admits no new object, so a type the condition
 * does not name is gone. Missing, Unknown or unreadable condition: true (list it to find out).
 */
export function contentMayRemain(
  ns: Pick<NamespaceSnapshot, "conditions"> | null,
  type: Pick<ResourceType, "group" | "resource">,
): boolean {
  const c = ns?.conditions.find((x) => x.type === "NamespaceContentRemaining");
  if (c === undefined) return true;
  if (c.status === "False") return false;
  if (c.status !== "True") return true;
  const listed = /^Some resources are remaining: (.*)$/.exec(c.message ?? "")?.[1];
  if (listed === undefined) return true;
  const label = `${type.resource}.${type.group} has `;
  return listed.split(", ").some((part) => part.startsWith(label));
}

/** The line every diagnosis made without AWS settings carries (Slack card and terminal text). */
export const AWS_NOT_CHECKED =
  "AWS not checked: no region configured (set AWS_REGION, or UNSTUCK_CLUSTERS_FILE with a region)";

/**
 * How recent a diagnosis of the same namespace in flight must be for a new ask to share it: about
 * the spread of a burst of people asking at once, with the bot pacing the start of their handlers;
 * later asks read afresh.
 */
export const DIAGNOSIS_JOIN_WITHIN_MS = 2_000;

const flights = new WeakMap<KubePort, SingleFlight<string, NamespaceDiagnosis>>();
const portIds = new WeakMap<object, number>();
let nextPortId = 0;
function portId(port: object): number {
  let id = portIds.get(port);
  if (id === undefined) portIds.set(port, (id = ++nextPortId));
  return id;
}

/**
 * Why a namespace is stuck. Asks for the same namespace through the same ports while a diagnosis
 * of it started within {@link DIAGNOSIS_JOIN_WITHIN_MS} is running share that run: a burst of
 * people (or a button and a command) asking at once costs the API server one diagnosis, not one
 * each. Nothing is kept once the run settles.
 */
export function diagnoseNamespace(
  kube: KubePort,
  name: string,
  options: DiagnoseOptions,
): Promise<NamespaceDiagnosis> {
  let flight = flights.get(kube);
  if (flight === undefined) flights.set(kube, (flight = singleFlight(DIAGNOSIS_JOIN_WITHIN_MS)));
  const key = [
    name,
    options.blockedAfterSeconds,
    options.concurrency,
    options.logTailLines,
    options.maxLogEvidence,
    options.deadlineMs,
    options.aws ? `${String(portId(options.aws.port))}/${options.aws.cluster ?? ""}` : "",
  ].join("\0");
  return flight.run(key, () => diagnoseOnce(kube, name, options));
}

async function diagnoseOnce(
  kube: KubePort,
  name: string,
  options: DiagnoseOptions,
): Promise<NamespaceDiagnosis> {
  // The collectors below read only through these ports, so bounding the ports bounds the whole
  // diagnosis; a read cut off by the deadline fails like any unreadable part (a warning).
  const deadline = startDiagnosisDeadline(options.deadlineMs ?? DEFAULT_DIAGNOSIS_DEADLINE_MS);
  try {
    const d = await collectDiagnosis(deadline.kube(kube), name, {
      ...options,
      ...(options.aws ? { aws: { ...options.aws, port: deadline.aws(options.aws.port) } } : {}),
    });
    const partial = deadline.summary();
    // Without a region the AWS half of the answer is missing: say so in every diagnosis, never silently.
    const notChecked = options.aws === undefined && d.verdict !== "not-found" ? [AWS_NOT_CHECKED] : [];
    const warnings = [...(partial !== undefined ? [partial] : []), ...d.warnings, ...notChecked];
    return warnings.length !== d.warnings.length ? { ...d, warnings } : d;
  } finally {
    deadline.dispose();
  }
}

async function collectDiagnosis(
  kube: KubePort,
  name: string,
  options: DiagnoseOptions,
): Promise<NamespaceDiagnosis> {
  const blockedAfterSeconds = options.blockedAfterSeconds ?? 300;
  const warnings: string[] = [];
  // The namespace first: a live (or missing) namespace costs this one read, and a Terminating one
  // carries the namespace controller's own report of what is left in it.
  const ns = await kube.getNamespace(name);
  if (!ns || !ns.deletionTimestamp) {
    // A name that does not exist is most often a typo: the existing names nearest it (one more
    // read, only then; a refusal to list them costs only the suggestion).
    const similarNames =
      ns === null
        ? nearestNames(
            name,
            await kube.listNamespaces().then(
              (all) => all.map((n) => n.name),
              () => [],
            ),
          )
        : [];
    return analyzeNamespace({
      similarNames,
      name,
      namespace: ns,
      listed: [],
      deployments: [],
      discoveryFailures: [],
      evidence: new Map(),
      warnings: [],
      now: options.now(),
      blockedAfterSeconds,
    });
  }
  const eventsRead = kube.listEvents(name).then(
    (events) => ({ ok: true as const, events }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  const discovery = await kube.discover();
  const { listed, unlisted, forbidden, scan, controllers } = await readContent(
    kube,
    ns,
    discovery,
    options,
    warnings,
  );

  const blockers = listed.flatMap((l) => l.objects.filter(heldByFinalizers));
  const deployments = await controllerDeployments(kube, blockers, controllers, warnings);
  const argoInstalled = discovery.resources.some(
    (t) => t.group === "argoproj.io" && t.resource === "applications" && t.verbs.includes("list"),
  );
  const [evidence, aws, argoApplications] = await Promise.all([
    gatherEvidence(kube, name, blockers, deployments, await eventsRead, options, warnings),
    options.aws
      ? gatherAws(
          kube,
          discovery.resources,
          options.aws,
          blockers,
          deployments,
          ns.deletionTimestamp,
          options.now(),
          warnings,
        )
      : undefined,
    // Who owns the namespace in Argo CD: two owners is the seed's root cause.
    argoInstalled
      ? kube.listArgoApplications().catch((err: unknown) => {
          warnings.push(`Could not list Argo CD Applications: ${toUserError(err).message}`);
          return undefined;
        })
      : undefined,
  ]);

  const diagnosis = analyzeNamespace({
    name,
    namespace: ns,
    listed,
    deployments,
    discoveryFailures: await nameApiServices(kube, discovery.failures, warnings),
    evidence,
    ...(aws ? { aws } : {}),
    ...(argoApplications ? { argoApplications } : {}),
    // What the namespace's conditions point at: webhooks, the nodes of its pods, their claims.
    causes: await collectCauses(kube, ns, listed, warnings),
    warnings,
    unlisted,
    forbidden,
    now: options.now(),
    blockedAfterSeconds,
  });
  return { ...diagnosis, scan };
}

interface ContentRead {
  readonly listed: ListedType[];
  readonly unlisted: string[];
  /** Of `unlisted`, the types RBAC refuses (403). */
  readonly forbidden: ForbiddenType[];
  readonly scan: ContentScan;
  /** The controllers of the finalizers the report names, asked for beside the lists. */
  readonly controllers?: { readonly finalizers: ReadonlySet<string>; readonly read: Promise<Controllers> };
}

/**
 * What is left in the namespace. When the namespace controller's report can be trusted (see
 * `readControllerReport`), only the types it names are listed — and the controllers of the
 * finalizers it names are asked for at the same time; should what the lists find disagree with it,
 * every other type is listed too. Otherwise every namespaced listable type is listed.
 */
async function readContent(
  kube: KubePort,
  ns: NamespaceSnapshot,
  discovery: DiscoverySnapshot,
  options: DiagnoseOptions,
  warnings: string[],
): Promise<ContentRead> {
  const listable = discovery.resources.filter((t) => t.namespaced && t.verbs.includes("list"));
  const all = listable.filter((t) => !DUPLICATE_GROUPS.has(t.group));
  const report = readControllerReport(ns, discovery.failures.length > 0);
  const full = async (reason: ScanFallback): Promise<ContentRead> => ({
    ...(await listTypes(kube, ns, all, options, warnings, { mustReadSome: true })),
    scan: { path: "full", listedTypes: all.length, reason },
  });
  if (!("types" in report)) return full(report);

  const named: ResourceType[] = [];
  for (const label of report.types.keys()) {
    const type = listable.find((t) => reportLabel(t) === label);
    if (type === undefined) return full({ kind: "unknown-type", resource: label });
    // The same objects as another group's type, counted there.
    if (!DUPLICATE_GROUPS.has(type.group)) named.push(type);
  }
  const finalizers = new Set(report.finalizers.keys());
  const controllers = { finalizers, read: readControllers(kube, finalizers) };
  const first = await listTypes(kube, ns, named, options, warnings, { mustReadSome: false });
  const disagreement = checkReport(report, first.listed, first.unlisted.length === 0);
  if (disagreement === undefined) {
    return { ...first, scan: { path: "report", listedTypes: named.length }, controllers };
  }
  const rest = await listTypes(
    kube,
    ns,
    all.filter((t) => !named.includes(t)),
    options,
    warnings,
    { mustReadSome: false },
  );
  return {
    listed: [...first.listed, ...rest.listed],
    unlisted: [...first.unlisted, ...rest.unlisted],
    forbidden: [...first.forbidden, ...rest.forbidden],
    scan: { path: "full", listedTypes: all.length, reason: disagreement },
    controllers,
  };
}

/**
 * Every object of `types` in the namespace (metadata only, bounded in parallel). A list that fails
 * is a warning and its type unread. `mustReadSome`: when not one list answered, the first failure
 * is the answer (an empty verdict would mislead).
 */
async function listTypes(
  kube: KubePort,
  ns: NamespaceSnapshot,
  types: readonly ResourceType[],
  options: DiagnoseOptions,
  warnings: string[],
  { mustReadSome }: { readonly mustReadSome: boolean },
): Promise<{ listed: ListedType[]; unlisted: string[]; forbidden: ForbiddenType[] }> {
  const results = await mapLimit(types, options.concurrency ?? DEFAULT_KUBE_CONCURRENCY, (t) =>
    // Listed only when the namespace's own condition says some remain (or says nothing).
    BODY_SENSITIVE.has(`${t.group}/${t.resource}`) && !contentMayRemain(ns, t)
      ? Promise.resolve([])
      : kube.listObjects(t, ns.name),
  );
  const listed: ListedType[] = [];
  const unlisted: string[] = [];
  const forbidden: ForbiddenType[] = [];
  results.forEach((r, i) => {
    const type = types[i];
    if (!type) return;
    if (r.ok) listed.push({ type, objects: r.value });
    else if (isUnstuckError(r.error) && r.error.code === ErrorCode.Forbidden && !contentMayRemain(ns, type)) {
      // Not granted (rbac.readScope=explicit), and the namespace's own count says none is left.
      listed.push({ type, objects: [] });
    } else {
      unlisted.push(resourceLabel(type));
      if (isUnstuckError(r.error) && r.error.code === ErrorCode.Forbidden)
        forbidden.push({ group: type.group, resource: type.resource });
      warnings.push(`Could not list ${resourceLabel(type)}: ${toUserError(r.error).message}`);
    }
  });
  const first = results[0];
  if (mustReadSome && listed.length === 0 && first && !first.ok) {
    throw first.error instanceof UnstuckError
      ? first.error
      : new UnstuckError(ErrorCode.Upstream, toUserError(first.error).message);
  }
  return { listed, unlisted, forbidden };
}

type Controllers = { ok: true; deployments: DeploymentSnapshot[] } | { ok: false; error: unknown };

/** The Deployments of the blockers' controllers: those asked for beside the lists when they cover every finalizer. */
async function controllerDeployments(
  kube: KubePort,
  blockers: readonly ObjectSnapshot[],
  early: ContentRead["controllers"],
  warnings: string[],
): Promise<DeploymentSnapshot[]> {
  const finalizers = new Set(blockers.flatMap((b) => b.finalizers));
  const covered = early !== undefined && [...finalizers].every((f) => early.finalizers.has(f));
  const r = await (covered ? early.read : readControllers(kube, finalizers));
  if (r.ok) return r.deployments;
  warnings.push(`Could not list controller Deployments: ${toUserError(r.error).message}`);
  return [];
}

/** A label value a selector accepts. */
const LABEL_VALUE = /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/**
 * The Deployments that may run the controllers of `finalizers`, read where they are: by the labels
 * the finalizer table knows each controller by (`app.kubernetes.io/name in (…)`, one list per
 * label key) rather than every Deployment of the cluster. Every Deployment is read only when a
 * controller has no label to look for, or no Deployment of it was found by label: it may be
 * installed without its chart's labels (matched by name or image), and "not installed" is said
 * only after looking at all of them. Built-in finalizers need none; an unknown one needs every
 * Deployment, to guess its controller from their names and images.
 */
async function readControllers(kube: KubePort, finalizers: Iterable<string>): Promise<Controllers> {
  const all = [...new Set(finalizers)];
  const wanted = all.flatMap((finalizer) => {
    const info = lookupFinalizer(finalizer);
    const matcher = info && !info.builtin ? (info.matcherFor?.(finalizer) ?? info.matcher) : undefined;
    return info && matcher ? [{ finalizer, info, matcher }] : [];
  });
  try {
    // A finalizer the table does not know: its controller is guessed from every Deployment.
    if (all.some((f) => lookupFinalizer(f) === undefined))
      return { ok: true, deployments: await kube.listDeployments() };
    if (wanted.length === 0) return { ok: true, deployments: [] };
    const values = new Map<string, Set<string>>();
    const keys = new Set<string>();
    let unlabelled = false;
    for (const { matcher } of wanted) {
      const labels = (matcher.labels ?? []).filter(([, v]) => v !== "" && LABEL_VALUE.test(v));
      for (const [k, v] of labels) values.set(k, (values.get(k) ?? new Set()).add(v));
      for (const k of matcher.labelKeys ?? []) keys.add(k);
      if (labels.length === 0 && (matcher.labelKeys ?? []).length === 0) unlabelled = true;
    }
    if (unlabelled) return { ok: true, deployments: await kube.listDeployments() };
    const selectors = [...[...values].map(([k, vs]) => `${k} in (${[...vs].sort().join(",")})`), ...keys];
    const lists = await Promise.all(
      selectors.map((labelSelector) => kube.listDeployments({ labelSelector })),
    );
    const byName = new Map(lists.flat().map((d) => [`${d.namespace}/${d.name}`, d]));
    const found = [...byName.values()];
    if (wanted.some(({ finalizer, info }) => matchControllers(info, found, finalizer).length === 0))
      return { ok: true, deployments: await kube.listDeployments() };
    return { ok: true, deployments: found };
  } catch (error) {
    return { ok: false, error };
  }
}

/** AWS findings for each blocker whose finalizer belongs to a load-balancer controller. */
async function gatherAws(
  kube: KubePort,
  resources: readonly ResourceType[],
  aws: NonNullable<DiagnoseOptions["aws"]>,
  blockers: readonly ObjectSnapshot[],
  deployments: readonly DeploymentSnapshot[],
  deletionTimestamp: string,
  now: Date,
  warnings: string[],
): Promise<Map<string, AwsFindings>> {
  const out = new Map<string, AwsFindings>();
  const eligible = blockers.filter((b) =>
    b.finalizers.some((f) => lookupFinalizer(f)?.awsLoadBalancer === true),
  );
  if (eligible.length === 0) return out;
  const listedOwners = await clusterOwners(kube, resources, warnings);
  const ownersComplete = listedOwners.complete;
  // The blockers themselves are known from the namespace's own lists even when a cluster-wide list failed.
  const owners = [...listedOwners.owners];
  for (const b of eligible) {
    const o = edgeOwnerOf(b);
    if (o && !owners.some((x) => x.kind === o.kind && x.namespace === o.namespace && x.name === o.name))
      owners.push(o);
  }
  const targets = eligible.slice(0, MAX_AWS_BLOCKERS);
  if (eligible.length > targets.length) {
    warnings.push(
      `AWS was checked for the first ${targets.length} of ${eligible.length} load-balancer blockers; diagnose them one namespace at a time for the rest.`,
    );
  }
  await Promise.all(
    targets.map(async (b) => {
      const controllers = b.finalizers.flatMap((f) => {
        const info = lookupFinalizer(f);
        return info ? matchControllers(info, deployments, f) : [];
      });
      const cluster =
        aws.cluster ?? controllers.map((d) => clusterNameFromArgs(d.args)).find((c) => c !== undefined);
      if (!cluster) {
        warnings.push(
          `Could not look into AWS for ${b.kind} ${b.name}: the cluster name is unknown (set UNSTUCK_CLUSTER_NAME or run the controller with --cluster-name).`,
        );
        return;
      }
      // CloudTrail from a little before the namespace deletion: the controller's first attempts.
      const since = new Date(Date.parse(b.deletionTimestamp ?? deletionTimestamp) - 15 * 60_000);
      out.set(
        blockerKey(b),
        await collectAwsForBlocker(aws.port, b, { cluster, since, until: now, owners, ownersComplete }),
      );
    }),
  );
  return out;
}

/** The IngressGroup an Ingress belongs to: the controller logs the group's errors under its name. */
function groupAliases(b: ObjectSnapshot): string[] {
  const group = b.kind === "Ingress" ? b.annotations["alb.ingress.kubernetes.io/group.name"] : undefined;
  return group !== undefined ? [group] : [];
}

/** The types whose objects the Load Balancer Controller turns into AWS resources. */
const OWNER_TYPES: readonly { group: string; resource: string }[] = [
  { group: "networking.k8s.io", resource: "ingresses" },
  { group: "", resource: "services" },
  { group: "elbv2.k8s.aws", resource: "targetgroupbindings" },
];

/**
 * Every Ingress, Service and TargetGroupBinding in the cluster that the controller manages: what is
 * live elsewhere (another namespace's member of the same IngressGroup, every other user of the
 * shared backend group) decides what the controller is really deleting. One list per type.
 */
export async function clusterOwners(
  kube: Pick<KubePort, "listObjects">,
  resources: readonly ResourceType[],
  warnings: string[],
): Promise<{ owners: EdgeOwner[]; objects: ObjectSnapshot[]; complete: boolean }> {
  const types = OWNER_TYPES.map((w) =>
    resources.find((t) => t.group === w.group && t.resource === w.resource && t.verbs.includes("list")),
  ).filter((t): t is ResourceType => t !== undefined);
  let complete = true;
  const lists = await Promise.all(
    types.map((t) =>
      kube.listObjects(t, undefined).catch((err: unknown) => {
        complete = false;
        warnings.push(
          `Could not list ${resourceLabel(t)} in all namespaces (${toUserError(err).message}): shared load balancers and security groups are not judged live or dying.`,
        );
        return [] as ObjectSnapshot[];
      }),
    ),
  );
  const objects = lists.flat();
  const owners = objects.map((o) => edgeOwnerOf(o)).filter((o): o is EdgeOwner => o !== undefined);
  return { owners, objects, complete };
}

async function gatherEvidence(
  kube: KubePort,
  namespace: string,
  blockers: readonly ObjectSnapshot[],
  deployments: readonly DeploymentSnapshot[],
  events:
    | { readonly ok: true; readonly events: readonly EventSnapshot[] }
    | { readonly ok: false; readonly error: unknown },
  options: DiagnoseOptions,
  warnings: string[],
): Promise<Map<string, Evidence[]>> {
  const evidence = new Map<string, Evidence[]>();
  const add = (key: string, items: readonly Evidence[]): void => {
    evidence.set(key, [...(evidence.get(key) ?? []), ...items]);
  };

  // Controllers that own any blocker's finalizer, each read once however many blockers it owns.
  const controllers = new Map<string, { deployment: DeploymentSnapshot; blockers: ObjectSnapshot[] }>();
  // Thousands of blockers share a handful of finalizers: each is matched to controllers once.
  const matched = new Map<string, DeploymentSnapshot[]>();
  const controllersOf = (f: string, b: ObjectSnapshot): DeploymentSnapshot[] => {
    const info = lookupFinalizer(f);
    // An unknown finalizer's likely controller depends on the object's kind too.
    const key = info ? f : `${f}|${b.apiVersion}|${b.kind}`;
    let ds = matched.get(key);
    if (ds === undefined) {
      ds = info
        ? matchControllers(info, deployments, f)
        : guessControllers(f, b, deployments).map((g) => g.deployment);
      matched.set(key, ds);
    }
    return ds;
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

  const logJobs = [...controllers.values()].slice(0, 8);
  const eventTargets = blockers.slice(0, MAX_EVENT_BLOCKERS);
  if (blockers.length > eventTargets.length) {
    warnings.push(`Events were read for the first ${eventTargets.length} of ${blockers.length} blockers.`);
  }
  if (!events.ok && eventTargets.length > 0) {
    warnings.push(`Could not list events in ${namespace}: ${toUserError(events.error).message}`);
  }
  // The namespace's Events, listed once beside the type lists, by the object they are about (what
  // a field selector on involvedObject.kind and .name would have asked the server for, per blocker).
  const about = new Map<string, EventSnapshot[]>();
  for (const e of events.ok ? events.events : []) {
    const key = `${e.involvedKind}/${e.involvedName}`;
    const list = about.get(key);
    if (list === undefined) about.set(key, [e]);
    else list.push(e);
  }
  for (const b of eventTargets) {
    const own = about.get(`${b.kind}/${b.name}`);
    if (own === undefined) continue;
    add(
      blockerKey(b),
      [...own]
        .sort((x, y) => (y.lastTimestamp ?? "").localeCompare(x.lastTimestamp ?? ""))
        .slice(0, 5)
        .map((e) => ({
          source: "event" as const,
          from: `Event ${e.reason}${e.source ? ` (${e.source})` : ""}`,
          text: `${e.message}${e.count > 1 ? ` (×${e.count})` : ""}`,
          ...(e.lastTimestamp ? { time: e.lastTimestamp } : {}),
          error: e.type === "Warning",
        })),
    );
  }
  await Promise.all([
    mapLimit(logJobs, 4, async ({ deployment, blockers: owned }) => {
      try {
        const lines = await controllerLogs(kube, deployment, options.logTailLines ?? 500);
        for (const b of owned) {
          add(
            blockerKey(b),
            evidenceFromLogs(
              lines,
              { namespace, name: b.name, kind: b.kind, aliases: groupAliases(b) },
              options.maxLogEvidence ?? 5,
            ),
          );
        }
      } catch (err) {
        warnings.push(
          `Could not read logs of ${deployment.namespace}/${deployment.name}: ${toUserError(err).message}`,
        );
      }
    }),
  ]);
  return evidence;
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

/**
 * A failing group-version is served by an APIService: name it, say whether it is Available and
 * how many ready endpoints its Service has. Read only when discovery failed; what cannot be read
 * (e.g. no RBAC for apiservices) is a warning, and the failure is still reported unnamed.
 */
async function nameApiServices(
  kube: KubePort,
  failures: readonly DiscoveryFailure[],
  warnings: string[],
): Promise<DiscoveryFailureFinding[]> {
  if (failures.length === 0) return [];
  let apiServices: ApiServiceSnapshot[];
  try {
    apiServices = await kube.listApiServices();
  } catch (err) {
    warnings.push(`Could not read APIServices to explain the discovery failure: ${toUserError(err).message}`);
    return [...failures];
  }
  return Promise.all(
    failures.map(async (f): Promise<DiscoveryFailureFinding> => {
      const slash = f.groupVersion.lastIndexOf("/");
      const group = f.groupVersion.slice(0, slash);
      const version = f.groupVersion.slice(slash + 1);
      const a = apiServices.find(
        (x) => (x.group === group && x.version === version) || x.name === `${version}.${group}`,
      );
      if (!a) return { ...f };
      const available = a.conditions.find((c) => c.type === "Available");
      let readyEndpoints: number | undefined;
      if (a.service) {
        try {
          readyEndpoints = (await kube.getServiceEndpoints(a.service.namespace, a.service.name)).ready;
        } catch (err) {
          warnings.push(
            `Could not read the endpoints of Service ${a.service.namespace}/${a.service.name}: ${toUserError(err).message}`,
          );
        }
      }
      return {
        ...f,
        apiService: {
          name: a.name,
          ...(a.service ? { service: `${a.service.namespace}/${a.service.name}` } : {}),
          available: available?.status ?? "Unknown",
          ...(available?.reason !== undefined ? { reason: available.reason } : {}),
          ...(available?.message !== undefined ? { message: available.message } : {}),
          ...(readyEndpoints !== undefined ? { readyEndpoints } : {}),
        },
      };
    }),
  );
}
