/**
 * Why is a namespace stuck? Pure function from collected snapshots to a diagnosis: no I/O, so it
 * can be tested on hundreds of cases in milliseconds. The causes are a table (`causes/table.ts`);
 * this is the fold over it: the snapshots become the facts every cause sees, each cause in turn
 * finds its links (reading what the causes before it found), the verdict is BLOCKED when any
 * cause says so, and the fixes come in stages — recovery, finishing the deletion, never again.
 */
import type {
  ArgoApplicationSnapshot,
  DeploymentSnapshot,
  NamespaceSnapshot,
  ObjectSnapshot,
} from "../kube/types.js";
import { heldByFinalizers } from "../kube/types.js";
import { bindingCleanup, isIngressLbcFinalizer, sharedGroupMemberCleanup } from "./finalizers.js";
import { registeredTargetsLeft, targetSpec } from "./binding.js";
import { analyzeArgoOwnership } from "./argo.js";
import { describeDependent, type AwsFindings } from "./aws.js";
import { ownersOf } from "./owners.js";
import { causeTable } from "./causes/table.js";
import type { CauseKind, CauseReads, Facts, LinkOf, ListedType, Stage } from "./causes/rule.js";
import type {
  Blocker,
  CauseLink,
  DiagnosisRemedy,
  DiscoveryFailureFinding,
  Evidence,
  FinalizerOwner,
  ForbiddenType,
  NamespaceDiagnosis,
  RemainingResource,
  Verdict,
} from "./types.js";
import { compareText } from "../util/collate.js";

export interface AnalyzeInput {
  readonly name: string;
  readonly namespace: NamespaceSnapshot | null;
  readonly listed: readonly ListedType[];
  readonly deployments: readonly DeploymentSnapshot[];
  readonly discoveryFailures: readonly DiscoveryFailureFinding[];
  /** Evidence per blocker key (`resource/name`), gathered from logs and events. */
  readonly evidence: ReadonlyMap<string, readonly Evidence[]>;
  /** AWS findings per blocker key, for Load Balancer Controller finalizers. */
  readonly aws?: ReadonlyMap<string, AwsFindings>;
  readonly warnings: readonly string[];
  /** Namespaced types whose list failed: what they hold is unknown, so content is not proven gone. */
  readonly unlisted?: readonly string[];
  /** Of those, the types RBAC refuses the bot (403): asking again changes nothing. */
  readonly forbidden?: readonly ForbiddenType[];
  readonly now: Date;
  readonly blockedAfterSeconds: number;
  /** Argo CD Applications of the cluster, when Argo CD is installed and readable. */
  readonly argoApplications?: readonly ArgoApplicationSnapshot[];
  /** What the causes asked to have read (webhooks, pods' nodes and claims), when read. */
  readonly causes?: CauseReads;
  /** For a namespace that does not exist: the existing ones within a typo of its name. */
  readonly similarNames?: readonly string[];
}

export function blockerKey(o: { resource: string; name: string }): string {
  return `${o.resource}/${o.name}`;
}

export function resourceLabel(type: { resource: string; group: string }): string {
  return type.group === "" ? type.resource : `${type.resource}.${type.group}`;
}

/**
 * What a forced removal really leaves, once AWS has been read: a TargetGroupBinding's registered
 * targets (never a load balancer), or, for a member of an IngressGroup other live members share,
 * only its own rules and target groups (the load balancer and its groups stay). Otherwise the
 * table's text.
 */
function cleanupFromAws(
  owners: readonly FinalizerOwner[],
  o: Pick<ObjectSnapshot, "kind" | "namespace" | "name">,
  aws: AwsFindings | undefined,
): readonly FinalizerOwner[] {
  if (!aws) return owners;
  const binding = aws.binding;
  if (binding && o.kind === "TargetGroupBinding") {
    const cleanup = bindingCleanup({
      targetGroup: binding.targetGroupName ?? binding.targetGroupArn ?? "(none named)",
      ...(binding.exists !== undefined ? { exists: binding.exists } : {}),
      ...(binding.ownerText !== undefined ? { owner: binding.ownerText } : {}),
      ...(binding.targets ? { targets: registeredTargetsLeft(binding).map(targetSpec) } : {}),
    });
    return owners.map((w) => (w.finalizer === "elbv2.k8s.aws/resources" ? { ...w, cleanup } : w));
  }
  if (o.kind !== "Ingress") return owners;
  const group = aws.group;
  if (!group) {
    const gone = goneLoadBalancerCleanup(aws);
    return gone === undefined
      ? owners
      : owners.map((w) => (isIngressLbcFinalizer(w.finalizer) ? { ...w, cleanup: gone } : w));
  }
  const others = group.members
    .filter((m) => !m.deleting && !(m.namespace === o.namespace && m.name === o.name))
    .map((m) => m.ref);
  if (others.length === 0) return owners;
  const lb = aws.resources.find((r) => r.type === "LoadBalancer" && r.exists && r.liveness?.state === "live");
  const cleanup = sharedGroupMemberCleanup({
    group: group.name,
    others,
    ...(lb ? { loadBalancer: lb.name ?? lb.id } : {}),
    securityGroups: aws.resources
      .filter((r) => r.type === "SecurityGroup" && r.exists && r.liveness?.state === "live")
      .map((r) => `${r.id}${r.name !== undefined ? ` (${r.name})` : ""}`),
    targetGroups: aws.resources
      .filter((r) => r.type === "TargetGroup" && r.exists && r.liveness?.state === "dying")
      .map((r) => r.name ?? r.id),
  });
  return owners.map((w) => (isIngressLbcFinalizer(w.finalizer) ? { ...w, cleanup } : w));
}

/**
 * What forcing leaves when the Ingress's load balancer is already gone in AWS: only what of its
 * stack still exists and nothing live uses — often nothing at all. `undefined` while the load
 * balancer exists or AWS was not fully read (the table's words stay).
 */
function goneLoadBalancerCleanup(aws: AwsFindings): string | undefined {
  const lb = aws.resources.find((r) => r.type === "LoadBalancer");
  if (lb === undefined || lb.exists || aws.problems.length > 0) return undefined;
  const left = leftInAws(aws);
  return left.length === 0
    ? `nothing in AWS: its load balancer ${lb.name ?? lb.id} is already gone and nothing of its stack is left`
    : `only ${left.join(", ")}: its load balancer ${lb.name ?? lb.id} is already gone`;
}

/** What of the stack exists and nothing live uses (`Type name (id)`). */
export function leftInAws(aws: AwsFindings): string[] {
  return aws.resources
    .filter((r) => r.exists && r.liveness?.state !== "live" && r.type !== "Listener")
    .map((r) => `${r.type} ${r.name ?? r.id}${r.name && r.name !== r.id ? ` (${r.id})` : ""}`);
}

export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${Math.floor(seconds)}s`;
  const m = Math.floor(seconds / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${m % 60 > 0 ? ` ${m % 60}m` : ""}`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** The diagnosis of one namespace: missing, active, or why its deletion has not finished and what to do. */
export function analyzeNamespace(input: AnalyzeInput): NamespaceDiagnosis {
  const base = baseOf(input);
  const ns = input.namespace;
  if (!ns) return notFoundDiagnosis(input, base);
  if (!ns.deletionTimestamp) {
    return {
      ...base,
      phase: ns.phase,
      verdict: "active",
      terminatingSeconds: null,
      conditions: ns.conditions,
      cause: [{ kind: "not-deleting", phase: ns.phase }],
      remedies: [],
    };
  }

  const terminatingSeconds = Math.max(0, (input.now.getTime() - Date.parse(ns.deletionTimestamp)) / 1000);
  const remaining = remainingOf(input.listed);
  const blockers = blockersOf(input, ns.name);
  const facts = factsOf(input, ns, {
    remaining,
    blockers,
    slow: terminatingSeconds >= input.blockedAfterSeconds,
  });
  const { cause, verdict, remedies } = foldCauses(facts);
  const recommended = recommend(remedies, verdict);

  return {
    ...base,
    phase: ns.phase || "Terminating",
    verdict,
    terminatingSeconds: Math.floor(terminatingSeconds),
    deletionTimestamp: ns.deletionTimestamp,
    conditions: ns.conditions,
    remaining,
    blockers,
    namespaceFinalizers: facts.namespaceFinalizers,
    discoveryFailures: input.discoveryFailures,
    ...(facts.argo ? { argo: facts.argo } : {}),
    cause,
    remedies,
    ...(recommended !== undefined ? { recommended } : {}),
  };
}

/** What every diagnosis carries, whatever the namespace's state: its name, the warnings, when it was checked. */
type DiagnosisBase = Pick<
  NamespaceDiagnosis,
  | "namespace"
  | "conditions"
  | "remaining"
  | "blockers"
  | "namespaceFinalizers"
  | "discoveryFailures"
  | "warnings"
  | "checkedAt"
>;

/** The fields every diagnosis starts from, empty until the namespace's state fills them. */
function baseOf(input: AnalyzeInput): DiagnosisBase {
  return {
    namespace: input.name,
    conditions: [],
    remaining: [],
    blockers: [],
    namespaceFinalizers: [],
    discoveryFailures: [],
    warnings: [...input.warnings],
    checkedAt: input.now.toISOString(),
  };
}

/** The diagnosis of a namespace that does not exist: check the name, leading with a likely typo's fix. */
function notFoundDiagnosis(input: AnalyzeInput, base: DiagnosisBase): NamespaceDiagnosis {
  return {
    ...base,
    phase: "NotFound",
    verdict: "not-found",
    terminatingSeconds: null,
    cause: [{ kind: "namespace-missing" }],
    remedies: [{ kind: "check-name", namespace: input.name, similar: input.similarNames ?? [] }],
    // A likely typo is worth leading with: the name meant.
    ...((input.similarNames ?? []).length > 0 ? { recommended: 0 } : {}),
  };
}

/** How many objects of each type are left, by type name. */
function remainingOf(listed: readonly ListedType[]): RemainingResource[] {
  return listed
    .filter((l) => l.objects.length > 0)
    .map((l) => ({ resource: resourceLabel(l.type), count: l.objects.length }))
    .sort((a, b) => compareText(a.resource, b.resource));
}

/** The objects finalizers hold, each with its owners, its evidence and its AWS side, by kind then name. */
function blockersOf(input: AnalyzeInput, namespace: string): Blocker[] {
  return input.listed
    .flatMap((l) => l.objects.filter(heldByFinalizers))
    .map((o) => blockerOf(input, o, namespace))
    .sort((a, b) => compareText(a.kind, b.kind) || compareText(a.name, b.name));
}

/** One held object as a blocker: who owns its finalizers, what forcing leaves, and the evidence found. */
function blockerOf(input: AnalyzeInput, o: ObjectSnapshot, namespace: string): Blocker {
  const aws = input.aws?.get(blockerKey(o));
  return {
    apiVersion: o.apiVersion,
    kind: o.kind,
    resource: o.resource,
    namespace: o.namespace ?? namespace,
    name: o.name,
    ...(o.uid ? { uid: o.uid } : {}),
    ...(o.resourceVersion ? { resourceVersion: o.resourceVersion } : {}),
    finalizers: o.finalizers,
    ...(o.deletionTimestamp ? { deletionTimestamp: o.deletionTimestamp } : {}),
    owners: cleanupFromAws(ownersOf(o.finalizers, input.deployments, o), o, aws),
    evidence: evidenceOf(input, o, aws),
    ...(o.loadBalancerHostnames ? { loadBalancerHostnames: o.loadBalancerHostnames } : {}),
    ...(aws ? { aws } : {}),
  };
}

/** What was found about one blocker: most of a big namespace's have none, and share one empty list. */
function evidenceOf(
  input: AnalyzeInput,
  o: ObjectSnapshot,
  aws: AwsFindings | undefined,
): readonly Evidence[] {
  const found = [
    ...(input.evidence.get(blockerKey(o)) ?? []),
    ...(aws ? awsEvidence(aws) : []),
    ...argoEvidence(o),
  ];
  return found.length > 0 ? found : NO_EVIDENCE;
}

const NO_EVIDENCE: readonly Evidence[] = Object.freeze([]);

/** The facts every cause sees, from the snapshots and what is left in the Terminating namespace. */
function factsOf(
  input: AnalyzeInput,
  ns: NamespaceSnapshot,
  left: Pick<Facts, "remaining" | "blockers" | "slow">,
): Facts {
  // Content is gone only when every type was read: a list that failed or hung may hold anything…
  const unlisted = input.unlisted ?? [];
  // …and none was refused: a refused delete leaves objects the controller's count leaves out.
  const contentGone =
    left.remaining.length === 0 &&
    unlisted.length === 0 &&
    !ns.conditions.some((c) => c.type === "NamespaceDeletionContentFailure" && c.status === "True");
  const argo = input.argoApplications ? analyzeArgoOwnership(ns.name, input.argoApplications) : undefined;
  return {
    ns,
    remaining: left.remaining,
    blockers: left.blockers,
    unlisted,
    forbidden: input.forbidden ?? [],
    discoveryFailures: input.discoveryFailures,
    namespaceFinalizers: contentGone ? [...ns.specFinalizers, ...ns.finalizers] : [],
    deployments: input.deployments,
    ...(argo ? { argo } : {}),
    ...(input.causes ? { reads: input.causes } : {}),
    slow: left.slow,
  };
}

const STAGES: readonly Stage[] = ["recover", "finish", "prevent"];

/**
 * The fold: each cause finds its links in table order (with what the causes before it found), the
 * verdict is BLOCKED when any says so, then each gives its fixes, recovery first.
 */
function foldCauses(facts: Facts): {
  cause: CauseLink[];
  verdict: Verdict;
  remedies: DiagnosisRemedy[];
} {
  const found: CauseLink[] = [];
  const of = <K extends CauseKind>(kind: K): LinkOf<K>[] =>
    found.filter((l): l is LinkOf<K> => l.kind === kind);
  const accumulator = { of };
  const links = causeTable.map((rule) => {
    const mine = rule.find(facts, accumulator);
    found.push(...mine);
    return mine;
  });
  const verdict: Verdict = causeTable.some((rule, i) => rule.blocks(links[i] ?? [], facts))
    ? "blocked"
    : "terminating";
  const remedies = STAGES.flatMap((stage) =>
    causeTable.flatMap((rule, i) =>
      rule.stage === stage ? rule.remedies(links[i] ?? [], facts, accumulator, verdict) : [],
    ),
  );
  return { cause: found, verdict, remedies };
}

/**
 * What each kind of step is worth leading with: a `fix` the operator can apply lets the controller
 * finish by itself; `force` only when it is the advice; a `step` otherwise; an `aside` (what stays,
 * never again) never leads. Typed over every kind: a new step does not compile until it says.
 */
type Lead = "fix" | "force" | "step" | "aside";
const LEADS: {
  readonly [K in DiagnosisRemedy["kind"]]: Lead | ((r: Extract<DiagnosisRemedy, { kind: K }>) => Lead);
} = {
  "fix-webhook": "fix",
  "find-refusal": "fix",
  "recover-node": "fix",
  "fix-controller-error": "fix",
  "fix-group-member": "fix",
  "release-dependent": (r) => (r.fix.actionable ? "fix" : "step"),
  "deregister-targets": (r) => (r.actionable ? "fix" : "step"),
  "force-finalizer": "force",
  "leave-in-place": "aside",
  "fix-argo-ownership": "aside",
  "check-name": "step",
  "grant-list": "step",
  "fix-api-service": "step",
  "check-aggregated-apis": "step",
  "find-finalizer-owner": "step",
  "install-controller": "step",
  "check-controller-runs": "step",
  "heal-controller": "step",
  "one-controller": "step",
  "read-controller-error": "step",
  "find-group-dependents": "step",
  wait: "step",
  "namespace-finalizer-builtin": "step",
  "namespace-finalizer-custom": "step",
  "release-claim": "step",
};

function leadOf(r: DiagnosisRemedy): Lead {
  const lead = LEADS[r.kind] as Lead | ((r: DiagnosisRemedy) => Lead);
  return typeof lead === "function" ? lead(r) : lead;
}

/** The one action to lead with: a fix before anything forced, forcing when it is the advice, else the first step. */
function recommend(remedies: readonly DiagnosisRemedy[], verdict: Verdict): number | undefined {
  if (remedies.length === 0 || verdict === "active" || verdict === "not-found") return undefined;
  const leads = remedies.map(leadOf);
  for (const wanted of ["fix", "force", "step"] as const) {
    const i = leads.indexOf(wanted);
    if (i >= 0) return i;
  }
  return undefined;
}

/**
 * Who CloudTrail says made a call, as a person names it: the role of an assumed-role session (its
 * session name is noise), a user by name; anything else as given.
 */
export function callerName(arn: string): string {
  const role = /^arn:[^:]+:sts::\d*:assumed-role\/([^/]+)\//.exec(arn);
  if (role?.[1] !== undefined) return `role ${role[1]}`;
  const user = /^arn:[^:]+:iam::\d*:user\/(.+)$/.exec(arn);
  if (user?.[1] !== undefined) return `user ${user[1]}`;
  return arn;
}

/** The exact AWS objects that hold the controller, and CloudTrail's record of its failures. */
function awsEvidence(f: AwsFindings): Evidence[] {
  const out: Evidence[] = [];
  for (const g of f.blockedGroups) {
    for (const d of describeDependent(g)) {
      out.push({
        source: "aws",
        from: `security group ${g.groupId} (${g.groupName})`,
        text: `still used by ${d}`,
        error: true,
      });
    }
    const failures = g.deleteFailures;
    const last = failures[0];
    if (last) {
      out.push({
        source: "cloudtrail",
        from: `CloudTrail DeleteSecurityGroup ${g.groupId}`,
        text: `${failures.length} failure${failures.length === 1 ? "" : "s"} ${last.errorCode}: ${last.errorMessage ?? ""}${last.caller ? ` (by ${callerName(last.caller)})` : ""}`,
        time: last.time,
        error: true,
      });
    }
  }
  const bound = f.binding;
  if (bound?.targetGroupArn !== undefined) {
    const left = registeredTargetsLeft(bound);
    const tg = `target group ${bound.targetGroupName ?? bound.targetGroupArn}`;
    if (bound.exists === false)
      out.push({ source: "aws", from: tg, text: `does not exist (${bound.targetGroupArn})`, error: false });
    else if (left.length > 0)
      out.push({
        source: "aws",
        from: tg,
        text: `still has ${String(left.length)} registered target${left.length === 1 ? "" : "s"}: ${left.slice(0, 10).map(targetSpec).join(" ")}`,
        error: true,
      });
  }
  for (const p of f.problems) out.push({ source: "aws", from: "AWS", text: p, error: false });
  return out;
}

/** Argo CD tracking on a blocker: the app that would recreate or re-delete it. */
function argoEvidence(o: ObjectSnapshot): Evidence[] {
  const tracking = o.annotations["argocd.argoproj.io/tracking-id"];
  const instance = o.labels["app.kubernetes.io/instance"];
  const app = tracking?.split(":")[0] ?? instance;
  if (!app) return [];
  return [
    {
      source: "event",
      from: tracking ? "annotation argocd.argoproj.io/tracking-id" : "label app.kubernetes.io/instance",
      text: `Tracked by Argo CD Application "${app}": a sync of that app recreates it after removal.`,
      error: false,
    },
  ];
}
