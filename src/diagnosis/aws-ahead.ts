/**
 * The AWS reads of one diagnosis, each made once, and what is asked of AWS before the diagnosis
 * needs it. Without asking ahead, the AWS half of an answer is a chain: the namespace, then its
 * Ingress, then the Ingress's load balancer, then that load balancer's target groups and the
 * interfaces holding its groups. Two things let those reads leave as soon as the namespace reads
 * as Terminating with a Load Balancer Controller finalizer:
 *
 * - the cluster's shared backend group and what holds it, which every such blocker's collection
 *   asks for whatever its Ingress says;
 * - the reads the last diagnosis of the same namespace made ({@link lastAwsReads}): during an
 *   incident the same namespace is asked about again and again, and its Ingress and load balancer
 *   rarely change between two asks.
 *
 * Either way every answer is fresh, asked during this diagnosis, and the diagnosis uses only the
 * answers to the reads it makes itself (the same method with the same arguments). A read asked
 * ahead that the diagnosis no longer makes (the Ingress now names another load balancer) costs one
 * AWS call and is never used; the diagnosis's deadline bounds only its own reads (`port`), so such a
 * read is never named among those the deadline cut off.
 */
import type { DiagnosisAwsReads } from "../aws/port.js";
import { LastReads } from "../util/last-reads.js";
import { notedReads, readsOnce } from "../util/reads-once.js";
import { backendGroupQuery } from "./aws.js";
import { readGroupDependents } from "./aws-collect.js";
import type { ControllerReport } from "./controller-report.js";
import { isIngressLbcFinalizer } from "./finalizers.js";

/** One read a diagnosis makes of AWS: the method and its arguments. */
export type AwsRead = {
  [M in keyof DiagnosisAwsReads]: { readonly method: M; readonly args: Parameters<DiagnosisAwsReads[M]> };
}[keyof DiagnosisAwsReads];

/** Every read a diagnosis may make (the compiler checks that none is missing). */
const READS = {
  loadBalancersByName: true,
  targetGroupsOf: true,
  listenersOf: true,
  registeredTargets: true,
  targetGroupsByArn: true,
  elbTagsOf: true,
  securityGroups: true,
  groupsReferencing: true,
  rulesOf: true,
  networkInterfacesUsing: true,
  cloudTrailEvents: true,
  resourcesByTags: true,
} as const satisfies Record<keyof DiagnosisAwsReads, true>;

type AnyRead = (...args: unknown[]) => Promise<unknown>;

/** A {@link DiagnosisAwsReads} whose every method is `make(method)`. */
function eachRead(make: (method: keyof DiagnosisAwsReads) => AnyRead): DiagnosisAwsReads {
  const methods = Object.keys(READS) as (keyof DiagnosisAwsReads)[];
  return Object.fromEntries(methods.map((m) => [m, make(m)])) as unknown as DiagnosisAwsReads;
}

/** Asks `read` of `aws`, whatever its method. */
function ask(aws: DiagnosisAwsReads, read: AwsRead): Promise<unknown> {
  return (aws[read.method] as AnyRead).apply(aws, read.args);
}

/** The AWS reads of one diagnosis. */
export interface DiagnosisAwsMemo {
  /**
   * The diagnosis's own reads: each distinct read (the same method with the same arguments) made at
   * most once, so blockers that share a backend group, and whatever was asked ahead, ask AWS once and
   * all get the answer (or the same failure, each naming it among its problems).
   */
  readonly port: DiagnosisAwsReads;
  /** Asks ahead of need, through the same memo; what is asked only here is not among `asked`. */
  readonly ahead: DiagnosisAwsReads;
  /** The distinct reads asked through `port` so far, in the order first asked. */
  asked(): AwsRead[];
}

export function onceEach(aws: DiagnosisAwsReads): DiagnosisAwsMemo {
  const once = readsOnce();
  const ahead = eachRead((m) => once(m, (...args: unknown[]) => (aws[m] as AnyRead).apply(aws, args)));
  const asked = notedReads<AwsRead>();
  const port = eachRead((m) => (...args: unknown[]) => {
    asked.note(m, args, { method: m, args } as AwsRead);
    return (ahead[m] as AnyRead)(...args);
  });
  return { port, ahead, asked: asked.all };
}

/** Whether the report names a finalizer whose collection reads the load balancer's AWS side. */
export function namesLoadBalancerFinalizer(report: ControllerReport): boolean {
  return [...report.finalizers.keys()].some(
    (f) => isIngressLbcFinalizer(f) || f === "service.k8s.aws/resources",
  );
}

/**
 * What can be asked of AWS as soon as the namespace is read, a round before its content, when the
 * namespace controller's report names a Load Balancer Controller finalizer of an Ingress or a
 * Service: the cluster's shared backend group and what holds it, and the reads the last diagnosis
 * of this namespace made (`again`). Asked through `ahead`, so the diagnosis's own asks of the same
 * reads get these answers.
 */
export function readAhead(
  memo: Pick<DiagnosisAwsMemo, "ahead">,
  report: ControllerReport,
  cluster: string,
  again: readonly AwsRead[] = [],
): void {
  if (!namesLoadBalancerFinalizer(report)) return;
  const aws = memo.ahead;
  const quiet = <T>(fallback: T, op: () => Promise<T>): Promise<T> => op().catch(() => fallback);
  // After the Kubernetes reads started beside these have left: building and signing each AWS request
  // takes the CPU for a while, and the namespace's content is what the rest of the answer waits for.
  setImmediate(() => {
    void aws
      .securityGroups({ tags: backendGroupQuery(cluster) })
      .then((groups) => Promise.all(groups.map((g) => readGroupDependents({ aws, attempt: quiet }, g.id))))
      .catch(() => undefined);
    // The memo keeps each answer's failure for the asks that want it; nobody waits on these.
    for (const read of again) ask(aws, read).catch(() => undefined);
  });
}

/**
 * What the last diagnosis of each namespace read of AWS (by `<cluster>/<namespace>`), to be asked
 * again by the next one (see above). A CloudTrail lookup's window ends when its diagnosis read the
 * namespace: the stack's DeleteSecurityGroup events are kept (their window starts from the blocker's
 * deletion, the same for the same Ingress) and asked again up to the new diagnosis's moment
 * ({@link endingAt}); an interface's history, whose window moves with its end, is not kept.
 */
export function lastAwsReads(): LastReads<AwsRead> {
  return new LastReads<AwsRead>(
    (r) => r.method !== "cloudTrailEvents" || r.args[0].resourceName === undefined,
  );
}

/** `reads` with each CloudTrail lookup's window ending at `until`, the moment of this diagnosis. */
export function endingAt(reads: readonly AwsRead[], until: Date): AwsRead[] {
  return reads.map((r) =>
    r.method === "cloudTrailEvents" ? { method: r.method, args: [{ ...r.args[0], end: until }] } : r,
  );
}
