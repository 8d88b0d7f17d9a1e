/**
 * Collects what the traffic path needs through the ports — hosted zones and the records of the
 * names asked about, CloudFront distributions, the account's load balancers, the cluster's
 * Ingresses and Services — and hands the snapshots to the pure model (`src/edge/path.ts`). A read
 * that fails becomes a named warning and the links that depended on it are `unknown`, never `ok`.
 */
import type { EdgeProbe } from "../net/port.js";
import type { TraceAwsReads } from "../aws/port.js";
import type {
  DistributionSnapshot,
  HostedZoneSnapshot,
  LoadBalancerSnapshot,
  RecordSetSnapshot,
  Tags,
} from "../aws/types.js";
import { elbNameOf, hostnamesReaching, normalizeDns, tracePaths } from "../edge/path.js";
import { lbcClusterNames } from "../diagnosis/finalizers.js";
import { ErrorCode, toUserError } from "../errors.js";
import type { KubePort } from "../kube/port.js";
import type { ObjectSnapshot, ResourceType } from "../kube/types.js";
import type { DeniedRead, HostProbe, TraceResult } from "../edge/trace-result.js";

/** Resolve and fetch each hostname (in parallel, each bounded by the probe's own timeout). */
export async function probeHosts(
  probe: EdgeProbe,
  hostnames: readonly string[],
  paths: readonly string[],
): Promise<HostProbe[]> {
  return Promise.all(
    hostnames.slice(0, 20).map(async (hostname) => {
      const [dns, http] = await Promise.all([
        probe
          .resolve(hostname)
          .then((r) =>
            r.kind === "addresses"
              ? r.addresses.length > 0
                ? `addresses ${r.addresses.slice(0, 4).join(", ")}`
                : "resolves, no address records"
              : r.kind === "nxdomain"
                ? "NXDOMAIN"
                : `no answer: ${r.message}`,
          ),
        Promise.all(
          [...new Set(["/", ...paths])].map(async (path) => {
            const url = `https://${hostname}${path}`;
            const r = await probe.http(url);
            return "status" in r
              ? { url, result: `HTTP ${String(r.status)}`, ok: r.status >= 200 && r.status < 400 }
              : { url, result: r.error, ok: false };
          }),
        ),
      ]);
      return { hostname, dns, http };
    }),
  );
}

/** A trace with the snapshots it was made from: what a repair plan is built on. */
export interface TraceWithReads {
  readonly trace: TraceResult;
  readonly zones: readonly HostedZoneSnapshot[];
  readonly records: readonly RecordSetSnapshot[];
  readonly distributions: readonly DistributionSnapshot[];
  readonly loadBalancers: readonly LoadBalancerSnapshot[];
  /** The cluster's Ingresses and LoadBalancer Services: the owners a target's evidence is read from. */
  readonly owners: readonly ObjectSnapshot[];
  /** The cluster whose controller's tags count, when known. */
  readonly cluster?: string;
}

/** What a trace is told about the cluster it runs for. */
export interface TraceOptions {
  /** The cluster name the controller tags with (`UNSTUCK_CLUSTER_NAME`); else read from its `--cluster-name`. */
  readonly cluster?: string;
}

/** What went wrong while reading: the warnings shown, the refusals by account. */
interface Problems {
  warnings: string[];
  notes: string[];
  denied: DeniedRead[];
}

interface Reads extends Problems {
  zones: HostedZoneSnapshot[];
  distributions: DistributionSnapshot[];
  loadBalancers: LoadBalancerSnapshot[];
  owners: ObjectSnapshot[];
  cluster?: string;
}

/** A read one account refused (its role, or a permission of it), as the trace reports it; else `undefined`. */
export function deniedRead(what: string, err: unknown): DeniedRead | undefined {
  const e = toUserError(err);
  const { account, role, action } = e.details;
  if (e.code !== ErrorCode.Forbidden || (typeof account !== "string" && typeof role !== "string")) {
    return undefined;
  }
  return {
    what,
    ...(typeof account === "string" ? { account } : {}),
    ...(typeof role === "string" ? { role } : {}),
    ...(typeof action === "string" ? { action } : {}),
  };
}

async function attempt<T>(problems: Problems, what: string, fallback: T, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    problems.warnings.push(`Could not read ${what}: ${toUserError(err).message}`);
    const denied = deniedRead(what, err);
    if (denied !== undefined) problems.denied.push(denied);
    return fallback;
  }
}

/** The trace's own fields from what the reads met: the warnings, the notes, and the refusals when any. */
function problemsOf(p: Problems): { warnings: string[]; notes: string[]; denied?: DeniedRead[] } {
  return { warnings: p.warnings, notes: p.notes, ...(p.denied.length > 0 ? { denied: p.denied } : {}) };
}

const OWNER_TYPES = [
  { group: "networking.k8s.io", resource: "ingresses" },
  { group: "", resource: "services" },
];

/** The cluster name the Load Balancer Controller tags with, from its Deployment's `--cluster-name`. */
async function controllerCluster(kube: KubePort): Promise<string | undefined> {
  const names = lbcClusterNames(await kube.listDeployments());
  // Two controllers tagging for different clusters: which tags count is not known.
  return names.length === 1 ? names[0] : undefined;
}

async function commonReads(
  aws: TraceAwsReads,
  kube: KubePort | undefined,
  options: TraceOptions,
  namespace?: string,
): Promise<Reads> {
  const problems: Problems = { warnings: [], notes: [], denied: [] };
  const ownersOf = async (): Promise<ObjectSnapshot[]> => {
    if (!kube) return [];
    const types = (await kube.discover()).resources.filter((t: ResourceType) =>
      OWNER_TYPES.some((w) => w.group === t.group && w.resource === t.resource),
    );
    const lists = await Promise.all(types.map((t) => kube.listObjects(t, namespace)));
    return lists.flat().filter((o) => o.kind === "Ingress" || o.serviceType === "LoadBalancer");
  };
  const clusterName =
    options.cluster !== undefined || !kube
      ? Promise.resolve(options.cluster)
      : attempt(problems, "the Load Balancer Controller's cluster name", undefined, () =>
          controllerCluster(kube),
        );
  // Tags decide ownership only for the cluster's own load balancers: those come with the listing,
  // through the Tagging API (100 a page). Any other's tags are read only when a traced path reaches
  // it (`withPathTags`), not DescribeTags for every load balancer of the account (20 a call).
  const listing = clusterName.then((c) =>
    attempt(problems, "load balancers", [] as LoadBalancerSnapshot[], () =>
      aws.allLoadBalancers(c !== undefined ? { clusterTags: c } : { withoutTags: true }),
    ),
  );
  // A list that could not be read is not asked for again on a miss (it would fail, and say so, twice).
  let distributionsFailed = false;
  const [zones, distributions, loadBalancers, owners, cluster] = await Promise.all([
    attempt(problems, "Route 53 hosted zones", [] as HostedZoneSnapshot[], () => aws.hostedZones()),
    attempt(problems, "CloudFront distributions", [] as DistributionSnapshot[], () =>
      aws.distributions().catch((err: unknown) => {
        distributionsFailed = true;
        throw err;
      }),
    ),
    listing,
    attempt(problems, "the cluster's Ingresses and Services", [] as ObjectSnapshot[], ownersOf),
    clusterName,
  ]);
  if (!kube)
    problems.notes.push("No cluster connection: load balancers are not matched to their Ingress/Service.");
  const reads: Reads = {
    zones,
    distributions,
    loadBalancers,
    owners,
    ...(cluster !== undefined ? { cluster } : {}),
    ...problems,
  };
  if (distributionsFailed) refreshedDistributions.add(reads);
  return reads;
}

/** What a record points at: its alias target or its CNAME value ("" for neither), compared form. */
function targetOf(r: RecordSetSnapshot): string {
  return normalizeDns(r.alias?.dnsName ?? (r.type === "CNAME" ? (r.values[0] ?? "") : ""));
}

function longestZone(zones: readonly HostedZoneSnapshot[], name: string): HostedZoneSnapshot[] {
  // Split-horizon: a public and a private zone of the same name both answer for it.
  const matching = zones.filter((z) => name === z.name || name.endsWith(`.${z.name}`));
  const longest = Math.max(0, ...matching.map((z) => z.name.length));
  return matching.filter((z) => z.name.length === longest);
}

/** `trace <hostname…>`: each name forward to its load balancer and owner. */
export async function traceHostnames(
  aws: TraceAwsReads,
  kube: KubePort | undefined,
  hostnames: readonly string[],
  now: () => Date,
  options: TraceOptions = {},
): Promise<TraceResult> {
  return (await traceHostnamesWithReads(aws, kube, hostnames, now, options)).trace;
}

export async function traceHostnamesWithReads(
  aws: TraceAwsReads,
  kube: KubePort | undefined,
  hostnames: readonly string[],
  now: () => Date,
  options: TraceOptions = {},
): Promise<TraceWithReads> {
  const reads = await commonReads(aws, kube, options);
  const records: RecordSetSnapshot[] = [];
  const asked = new Set<string>();
  // Follow names through our zones (CNAME chains, origins that are our own names), a few levels.
  let frontier = hostnames.map(normalizeDns);
  for (let depth = 0; depth < 5 && frontier.length > 0; depth++) {
    const next: string[] = [];
    for (const name of frontier) {
      if (asked.has(name)) continue;
      asked.add(name);
      for (const z of longestZone(reads.zones, name)) {
        const got = await attempt(
          reads,
          `records named ${name} in zone ${z.name}`,
          [] as RecordSetSnapshot[],
          () => aws.recordSets(z.id, name),
        );
        records.push(...got);
        for (const r of got) {
          const t = targetOf(r);
          if (t !== "") next.push(t);
        }
      }
    }
    await freshDistributionsOnMiss(aws, reads, next);
    const origins = reads.distributions
      .filter((d) => next.includes(normalizeDns(d.domainName)))
      .flatMap((d) => d.origins.map((o) => normalizeDns(o.domainName)));
    frontier = [...next, ...origins].filter((n) => !asked.has(n));
  }
  // ExternalDNS's ownership records of the names read: evidence of whose load balancer a record named.
  records.push(...(await ownershipRecords(aws, reads, records)));
  await withPathTags(aws, reads, hostnames, records);
  return {
    trace: {
      subject: { hostnames: hostnames.map(normalizeDns) },
      paths: tracePaths({ ...reads, hostnames, records }),
      ...problemsOf(reads),
      ownersGone: false,
      checkedAt: now().toISOString(),
    },
    ...reads,
    records,
  };
}

/**
 * The distribution list may be up to 15 s old (`CloudFrontPort.distributions`): when a name points
 * at a distribution it does not hold (made since), it is read again, once per trace.
 */
const refreshedDistributions = new WeakSet<Reads>();
async function freshDistributionsOnMiss(
  aws: TraceAwsReads,
  reads: Reads,
  targets: readonly string[],
): Promise<void> {
  if (refreshedDistributions.has(reads)) return;
  const known = new Set(reads.distributions.map((d) => normalizeDns(d.domainName)));
  if (!targets.some((t) => t.endsWith(".cloudfront.net") && !known.has(t))) return;
  refreshedDistributions.add(reads);
  reads.distributions = await attempt(reads, "CloudFront distributions", reads.distributions, () =>
    aws.distributions({ fresh: true }),
  );
}

/** The load balancers the traced names reach: through records (alias, CNAME) and distributions' origins. */
function loadBalancersReached(
  reads: Reads,
  hostnames: readonly string[],
  records: readonly RecordSetSnapshot[],
): LoadBalancerSnapshot[] {
  const recordsByName = new Map<string, RecordSetSnapshot[]>();
  for (const r of records) {
    const name = normalizeDns(r.name);
    const same = recordsByName.get(name);
    if (same === undefined) recordsByName.set(name, [r]);
    else same.push(r);
  }
  const lbByDns = new Map(reads.loadBalancers.map((l) => [normalizeDns(l.dnsName), l]));
  const distByDomain = new Map(reads.distributions.map((d) => [normalizeDns(d.domainName), d]));
  const reached = new Map<string, LoadBalancerSnapshot>();
  const seen = new Set<string>();
  let frontier = hostnames.map(normalizeDns);
  for (let depth = 0; depth < 6 && frontier.length > 0; depth++) {
    const next: string[] = [];
    for (const name of frontier) {
      if (seen.has(name)) continue;
      seen.add(name);
      const lb = lbByDns.get(name);
      if (lb !== undefined) reached.set(lb.arn, lb);
      for (const r of recordsByName.get(name) ?? []) next.push(targetOf(r));
      for (const o of distByDomain.get(name)?.origins ?? []) next.push(normalizeDns(o.domainName));
    }
    frontier = next.filter((n) => n !== "" && !seen.has(n));
  }
  return [...reached.values()];
}

/**
 * The tags of the load balancers on the traced paths that the listing left without (another
 * cluster's, or every one when the cluster is not known): a few DescribeTags calls, not one per 20
 * load balancers of the account. `reads.loadBalancers` is updated in place.
 */
async function withPathTags(
  aws: TraceAwsReads,
  reads: Reads,
  hostnames: readonly string[],
  records: readonly RecordSetSnapshot[],
): Promise<void> {
  const untagged = loadBalancersReached(reads, hostnames, records).filter(
    (lb) => Object.keys(lb.tags).length === 0,
  );
  if (untagged.length === 0) return;
  const tags = await attempt(
    reads,
    "the tags of the load balancers on the path",
    new Map<string, Tags>(),
    () => aws.elbTagsOf(untagged.map((lb) => lb.arn)),
  );
  if (tags.size === 0) return;
  reads.loadBalancers = reads.loadBalancers.map((lb) => {
    const found = tags.get(lb.arn);
    return found !== undefined && Object.keys(lb.tags).length === 0 ? { ...lb, tags: found } : lb;
  });
}

/**
 * ExternalDNS's TXT ownership records (`<name>`, `a-<name>`, `cname-<name>`) for each record that
 * names a load balancer that no longer exists: read only then, a few names, not the zone. A record
 * named like its A record was already read with it (`recordSets(zone, name)` returns every type).
 */
async function ownershipRecords(
  aws: TraceAwsReads,
  reads: Reads,
  records: readonly RecordSetSnapshot[],
): Promise<RecordSetSnapshot[]> {
  const live = new Set(reads.loadBalancers.map((l) => normalizeDns(l.dnsName)));
  const dead = records.filter((r) => {
    const t = targetOf(r);
    return elbNameOf(t) !== undefined && !live.has(t);
  });
  const names = [...new Set(dead.flatMap((r) => [`a-${r.name}`, `cname-${r.name}`]))].slice(0, 40);
  const found = await Promise.all(
    names.flatMap((name) =>
      longestZone(reads.zones, name).map((z) =>
        attempt(reads, `records named ${name} in zone ${z.name}`, [] as RecordSetSnapshot[], () =>
          aws.recordSets(z.id, name),
        ),
      ),
    ),
  );
  return found.flat().filter((r) => r.type === "TXT");
}

/**
 * `trace ns <namespace>`: every hostname and distribution that reaches the namespace's load
 * balancers — or names one of its stacks' load balancers that no longer exists — traced forward.
 */
export async function traceNamespace(
  aws: TraceAwsReads,
  kube: KubePort,
  namespace: string,
  now: () => Date,
  options: TraceOptions = {},
): Promise<TraceResult> {
  return (await traceNamespaceWithReads(aws, kube, namespace, now, options)).trace;
}

export async function traceNamespaceWithReads(
  aws: TraceAwsReads,
  kube: KubePort,
  namespace: string,
  now: () => Date,
  options: TraceOptions = {},
): Promise<TraceWithReads> {
  const reads = await commonReads(aws, kube, options);
  const mine = reads.owners.filter((o) => o.namespace === namespace);
  const dnsNames = mine.flatMap((o) => o.loadBalancerHostnames ?? []);
  // Load balancers the controller made for this namespace, now or before: `k8s-<ns:8>-…` (implicit
  // groups), plus the exact prefixes of the current ones (explicit groups are named by group).
  const namePrefixes = [
    ...new Set([
      `k8s-${namespace.replace(/[^a-zA-Z0-9]/g, "").slice(0, 8)}-`,
      ...dnsNames
        .map((h) => elbNameOf(h))
        .filter((n): n is string => n !== undefined)
        .map((n) => n.replace(/[0-9a-f]{10}$/, "")),
    ]),
  ];
  const records: RecordSetSnapshot[] = [];
  for (const z of reads.zones) {
    records.push(
      ...(await attempt(reads, `records of zone ${z.name}`, [] as RecordSetSnapshot[], () =>
        aws.recordSets(z.id),
      )),
    );
  }
  await freshDistributionsOnMiss(
    aws,
    reads,
    records.map((r) => targetOf(r)),
  );
  const hostnames = hostnamesReaching({ ...reads, records }, { dnsNames, namePrefixes });
  if (mine.length === 0) {
    reads.notes.push(`No Ingress or Service of type LoadBalancer in namespace ${namespace}.`);
  }
  await withPathTags(aws, reads, hostnames, records);
  return {
    trace: {
      subject: { namespace },
      paths: tracePaths({ ...reads, hostnames, records }),
      ...problemsOf(reads),
      ownersGone: mine.length === 0,
      checkedAt: now().toISOString(),
    },
    ...reads,
    records,
  };
}
