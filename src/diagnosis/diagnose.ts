/**
 * Collects what `analyzeNamespace` needs through the injected `KubePort` — the namespace first
 * (a live one costs nothing more), then what is left in it: only the types the namespace
 * controller's own report names when that report can be trusted, every namespaced listable type
 * otherwise (metadata only, in parallel, bounded) — the controllers of the finalizers found, their
 * logs and the blockers' events — and hands the snapshots to the pure analysis. A part that cannot
 * be read becomes a warning; the rest of the diagnosis still appears. */
import { singleFlight, type SingleFlight } from "../util/single-flight.js";
import type { DiagnosisAwsReads } from "../aws/port.js";
import { toUserError } from "../errors.js";
import type { KubePort } from "../kube/port.js";
import { edgeOwnerOf, type EdgeOwner } from "../edge/model.js";
import type { DeploymentSnapshot, NamespaceSnapshot, ObjectSnapshot, ResourceType } from "../kube/types.js";
import { heldByFinalizers, type ApiServiceSnapshot, type DiscoveryFailure } from "../kube/types.js";
import { analyzeNamespace, blockerKey, resourceLabel } from "./analyze.js";
import { nearestNames } from "../util/similar.js";
import type { AwsFindings } from "./aws.js";
import { collectAwsForBlocker } from "./aws-collect.js";
import {
  endingAt,
  lastAwsReads,
  namesLoadBalancerFinalizer,
  onceEach,
  readAhead,
  type AwsRead,
} from "./aws-ahead.js";
import { collectCauses } from "./causes-collect.js";
import { readContent } from "./content-collect.js";
import { readControllerReport } from "./controller-report.js";
import { controllerDeployments, earlyControllers } from "./controllers-collect.js";
import {
  gatherEvidence,
  lastLogReads,
  logReadsOnce,
  readLogsAhead,
  type EventsRead,
  type PodLogRead,
} from "./evidence-collect.js";
import type { LastReads } from "../util/last-reads.js";
import { lookupFinalizer, matchControllers } from "./finalizers.js";
import { DEFAULT_DIAGNOSIS_DEADLINE_MS, startDiagnosisDeadline, type DiagnosisDeadline } from "./deadline.js";
import { clusterNameFromArgs } from "../edge/lbc-names.js";
import type { DiscoveryFailureFinding, NamespaceDiagnosis } from "./types.js";

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

/** Bound on the blockers looked up in AWS, so a namespace with thousands of them still answers in time. */
const MAX_AWS_BLOCKERS = 5;

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
/**
 * What each namespace's last diagnosis read, per connection (the bot's live as long as the bot): its
 * AWS reads and its controllers' logs, asked again by the next diagnosis of it (`./aws-ahead.ts`).
 */
const lastAws = new WeakMap<DiagnosisAwsReads, LastReads<AwsRead>>();
const lastLogs = new WeakMap<KubePort, LastReads<PodLogRead>>();

/** What the last diagnoses through these ports read. */
interface Recall {
  readonly aws: LastReads<AwsRead> | undefined;
  readonly logs: LastReads<PodLogRead>;
}

function recallOf(kube: KubePort, aws: DiagnosisAwsReads | undefined): Recall {
  let logs = lastLogs.get(kube);
  if (logs === undefined) lastLogs.set(kube, (logs = lastLogReads()));
  if (aws === undefined) return { aws: undefined, logs };
  let reads = lastAws.get(aws);
  if (reads === undefined) lastAws.set(aws, (reads = lastAwsReads()));
  return { aws: reads, logs };
}
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
/** One diagnosis, bounded by its deadline; a partial or AWS-less answer says so in its warnings. */
async function diagnoseOnce(
  kube: KubePort,
  name: string,
  options: DiagnoseOptions,
): Promise<NamespaceDiagnosis> {
  // The collectors below read only through these ports, so bounding the ports bounds the whole
  // diagnosis; a read cut off by the deadline fails like any unreadable part (a warning).
  const deadline = startDiagnosisDeadline(options.deadlineMs ?? DEFAULT_DIAGNOSIS_DEADLINE_MS);
  try {
    const recall = recallOf(kube, options.aws?.port);
    const d = await collectDiagnosis(kube, name, options, recall, deadline);
    const partial = deadline.summary();
    // Without a region the AWS half of the answer is missing: say so in every diagnosis, never silently.
    const notChecked = options.aws === undefined && d.verdict !== "not-found" ? [AWS_NOT_CHECKED] : [];
    const warnings = [...(partial !== undefined ? [partial] : []), ...d.warnings, ...notChecked];
    return warnings.length !== d.warnings.length ? { ...d, warnings } : d;
  } finally {
    deadline.dispose();
  }
}
/**
 * The diagnosis itself: the namespace, then (when it is Terminating) what is left in it, the
 * controllers of its blockers, their evidence, AWS and Argo CD. It reads through ports bounded by
 * the deadline; what is asked ahead of need is not, so a read it never came to need is never named
 * among those the deadline cut off.
 */
async function collectDiagnosis(
  unbounded: KubePort,
  name: string,
  options: DiagnoseOptions,
  recall: Recall,
  deadline: Pick<DiagnosisDeadline, "kube" | "aws">,
): Promise<NamespaceDiagnosis> {
  const kube = deadline.kube(unbounded);
  const blockedAfterSeconds = options.blockedAfterSeconds ?? 300;
  const warnings: string[] = [];
  // The namespace first: a live (or missing) namespace costs this read (and discovery beside it,
  // which the bot answers from its cache), and a Terminating one carries the namespace
  // controller's own report of what is left in it. Discovery is asked for at the same time, so a
  // Terminating namespace does not wait for it one round trip later.
  const discovering = kube.discover();
  discovering.catch(() => undefined);
  const ns = await kube.getNamespace(name);
  if (!ns || !ns.deletionTimestamp) return answerNotTerminating(kube, name, ns, options);
  // The moment the namespace was read: what AWS is asked up to (CloudTrail's window ends here).
  const readAt = options.now();
  const eventsRead: Promise<EventsRead> = kube.listEvents(name).then(
    (events) => ({ ok: true as const, events }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  // AWS reads made once each for this diagnosis. When the cluster is known, what the namespace's
  // report says needs AWS is asked for now, beside its content, with what the last diagnosis of
  // this namespace read (src/diagnosis/aws-ahead.ts).
  const memo = options.aws && onceEach(options.aws.port);
  const awsReads = options.aws && memo && { ...options.aws, port: deadline.aws(memo.port) };
  const report = readControllerReport(ns, false);
  const awsKey = `${awsReads?.cluster ?? ""}/${name}`;
  if (memo && awsReads?.cluster !== undefined && "finalizers" in report)
    readAhead(memo, report, awsReads.cluster, endingAt(recall.aws?.of(awsKey) ?? [], readAt));
  // The controllers of the reported finalizers, and then their logs, beside the content too; the
  // logs the last diagnosis read at once.
  const logs = logReadsOnce(unbounded);
  const logReads = deadline.kube(logs.kube);
  const early = "finalizers" in report ? earlyControllers(kube, report) : undefined;
  if (early !== undefined) {
    logs.again(recall.logs.of(name));
    readLogsAhead(logReads, early, options);
  }
  const discovery = await discovering;
  const content = readContent(kube, ns, discovery, options, warnings, early);
  // What no list of the namespace's decides, read beside them once they have left.
  const beside = readBesideContent(kube, discovery.resources, report, awsReads !== undefined);
  const { listed, unlisted, forbidden, scan, controllers } = await content;

  const blockers = listed.flatMap((l) => l.objects.filter(heldByFinalizers));
  const deployments = await controllerDeployments(kube, blockers, controllers, warnings);
  // Everything below reads only what the lists gave: one stage, not one after another. The last
  // two say their warnings after the others', as when they came after them.
  const apiWarnings: string[] = [];
  const causeWarnings: string[] = [];
  const [evidence, aws, argoApplications, discoveryFailures, causes] = await Promise.all([
    eventsRead.then((events) =>
      gatherEvidence(logReads, name, blockers, deployments, events, options, warnings),
    ),
    awsReads
      ? gatherAws(
          kube,
          discovery.resources,
          awsReads,
          blockers,
          deployments,
          ns.deletionTimestamp,
          readAt,
          warnings,
          beside.owners,
        )
      : undefined,
    // Who owns the namespace in Argo CD: two owners is the seed's root cause.
    beside.argo?.catch((err: unknown) => {
      warnings.push(`Could not list Argo CD Applications: ${toUserError(err).message}`);
      return undefined;
    }),
    nameApiServices(kube, discovery.failures, apiWarnings),
    // What the namespace's conditions point at: webhooks, the nodes of its pods, their claims.
    collectCauses(kube, ns, listed, causeWarnings),
  ]);
  warnings.push(...apiWarnings, ...causeWarnings);

  const diagnosis = analyzeNamespace({
    name,
    namespace: ns,
    listed,
    deployments,
    discoveryFailures,
    evidence,
    ...(aws ? { aws } : {}),
    ...(argoApplications ? { argoApplications } : {}),
    causes,
    warnings,
    unlisted,
    forbidden,
    now: options.now(),
    blockedAfterSeconds,
  });
  if (memo && awsReads?.cluster !== undefined) recall.aws?.remember(awsKey, memo.asked());
  recall.logs.remember(name, logs.asked());
  return { ...diagnosis, scan };
}

/**
 * The answer for a namespace that is live or does not exist. A name that does not exist is most
 * often a typo: the existing names nearest it come with the answer (one more read, only then; a
 * refusal to list them costs only the suggestion).
 */
async function answerNotTerminating(
  kube: KubePort,
  name: string,
  ns: NamespaceSnapshot | null,
  options: DiagnoseOptions,
): Promise<NamespaceDiagnosis> {
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
    blockedAfterSeconds: options.blockedAfterSeconds ?? 300,
  });
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
  early: OwnersRead | undefined,
): Promise<Map<string, AwsFindings>> {
  const out = new Map<string, AwsFindings>();
  const eligible = blockers.filter((b) =>
    b.finalizers.some((f) => lookupFinalizer(f)?.awsLoadBalancer === true),
  );
  if (eligible.length === 0) return out;
  // The cluster-wide lists run beside the AWS reads, which never need them: only the judgement of
  // what is live or dying waits for them.
  const listing = early
    ? early.listing.then((listed) => (warnings.push(...early.warnings), listed))
    : clusterOwners(kube, resources, warnings);
  // Said after the lists' own warnings, as when the lists were read first.
  const notes: string[] = [];
  const targets = eligible.slice(0, MAX_AWS_BLOCKERS);
  if (eligible.length > targets.length) {
    notes.push(
      `AWS was checked for the first ${targets.length} of ${eligible.length} load-balancer blockers; diagnose them one namespace at a time for the rest.`,
    );
  }
  const runs = targets.flatMap((b) => {
    const controllers = b.finalizers.flatMap((f) => {
      const info = lookupFinalizer(f);
      return info ? matchControllers(info, deployments, f) : [];
    });
    const cluster =
      aws.cluster ?? controllers.map((d) => clusterNameFromArgs(d.args)).find((c) => c !== undefined);
    if (!cluster) {
      notes.push(
        `Could not look into AWS for ${b.kind} ${b.name}: the cluster name is unknown (set UNSTUCK_CLUSTER_NAME or run the controller with --cluster-name).`,
      );
      return [];
    }
    return [{ blocker: b, cluster }];
  });
  const owners = listing.then((listed) => {
    warnings.push(...notes);
    // The blockers themselves are known from the namespace's own lists even when a cluster-wide list failed.
    const all = [...listed.owners];
    for (const b of eligible) {
      const o = edgeOwnerOf(b);
      if (o && !all.some((x) => x.kind === o.kind && x.namespace === o.namespace && x.name === o.name))
        all.push(o);
    }
    return { owners: all, complete: listed.complete };
  });
  await Promise.all([
    owners,
    ...runs.map(async ({ blocker: b, cluster }) => {
      // CloudTrail from a little before the namespace deletion: the controller's first attempts.
      const since = new Date(Date.parse(b.deletionTimestamp ?? deletionTimestamp) - 15 * 60_000);
      out.set(blockerKey(b), await collectAwsForBlocker(aws.port, b, { cluster, since, until: now, owners }));
    }),
  ]);
  return out;
}
/** The cluster-wide owners of load balancers, read ahead, with the warnings their lists left. */
interface OwnersRead {
  readonly listing: ReturnType<typeof clusterOwners>;
  readonly warnings: string[];
}

/**
 * The reads a diagnosis makes whatever its namespace's lists hold, started beside them: Argo CD's
 * Applications when Argo CD is installed and, when AWS is looked into and the namespace
 * controller's report names a Load Balancer Controller finalizer, the cluster's owners of load
 * balancers (which the AWS half's judgement waits for). Otherwise each would wait for the lists.
 */
function readBesideContent(
  kube: KubePort,
  resources: readonly ResourceType[],
  report: ReturnType<typeof readControllerReport>,
  aws: boolean,
): { argo: ReturnType<KubePort["listArgoApplications"]> | undefined; owners: OwnersRead | undefined } {
  const argoInstalled = resources.some(
    (t) => t.group === "argoproj.io" && t.resource === "applications" && t.verbs.includes("list"),
  );
  const argo = argoInstalled ? kube.listArgoApplications() : undefined;
  // Its failure is a warning said with the others', once the lists are in.
  argo?.catch(() => undefined);
  if (!aws || !("finalizers" in report) || !namesLoadBalancerFinalizer(report))
    return { argo, owners: undefined };
  const warnings: string[] = [];
  return { argo, owners: { listing: clusterOwners(kube, resources, warnings), warnings } };
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
