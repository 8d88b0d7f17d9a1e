/**
 * Why is a namespace stuck? Pure function from collected snapshots to a diagnosis: no I/O, so it
 * can be tested on hundreds of cases in milliseconds.
 */
import type {
  ArgoApplicationSnapshot,
  DeploymentSnapshot,
  NamespaceSnapshot,
  ObjectSnapshot,
  ResourceType,
} from "../kube/types.js";
import type { AdmissionWebhookSnapshot, NodeSnapshot, PodPlacementSnapshot } from "../kube/port.js";
import { heldByFinalizers } from "../kube/types.js";
import {
  bindingCleanup,
  isIngressLbcFinalizer,
  lookupFinalizer,
  guessControllers,
  matchControllers,
  sharedGroupMemberCleanup,
  type FinalizerInfo,
} from "./finalizers.js";
import { registeredTargetsLeft, targetSpec } from "./binding.js";
import { analyzeArgoOwnership } from "./argo.js";
import { describeDependent, type AwsFindings } from "./aws.js";
import type {
  Blocker,
  CauseLink,
  ControllerRef,
  DiagnosisRemedy,
  DiscoveryFailureFinding,
  Evidence,
  FinalizerOwner,
  ForbiddenType,
  NamespaceDiagnosis,
  ObjectRef,
  OwnerStatus,
  RemainingResource,
  Verdict,
} from "./types.js";

export interface ListedType {
  readonly type: ResourceType;
  readonly objects: readonly ObjectSnapshot[];
}

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
  /** What the namespace's conditions point at (webhooks, pods' nodes and claims), when read. */
  readonly causes?: CauseReads;
}

/** What `collectCauses` read because the namespace's state pointed at it. */
export interface CauseReads {
  /** The webhooks `NamespaceDeletionContentFailure` names, with their Service's state. */
  readonly webhooks?: readonly {
    readonly webhook: AdmissionWebhookSnapshot;
    readonly serviceExists?: boolean;
    readonly readyEndpoints?: number;
  }[];
  /** The namespace's pods with their node and claims. */
  readonly pods?: readonly PodPlacementSnapshot[];
  /** The nodes of the pods being deleted, by name; `null`: no such Node. */
  readonly nodes?: ReadonlyMap<string, NodeSnapshot | null>;
}

const PVC_PROTECTION = "kubernetes.io/pvc-protection";

/** The condition's message while it is True. */
function trueCondition(ns: NamespaceSnapshot, type: string): string | undefined {
  const c = ns.conditions.find((x) => x.type === type);
  return c?.status === "True" ? (c.message ?? "") : undefined;
}

/** Webhook names an API server error quotes: `failed calling webhook "x"`, `admission webhook "x" denied`. */
export function webhooksNamedIn(message: string): string[] {
  const names = [...message.matchAll(/(?:failed calling webhook|admission webhook) "([^"]+)"/g)].map(
    (m) => m[1] ?? "",
  );
  return [...new Set(names)].filter((n) => n !== "");
}

function interceptsDelete(w: AdmissionWebhookSnapshot): boolean {
  return w.rules.some((r) => r.operations.includes("DELETE") || r.operations.includes("*"));
}

/** The refusals `NamespaceDeletionContentFailure` reports, each named with its owner when it can be. */
function deleteRefusals(ns: NamespaceSnapshot, reads: CauseReads | undefined): CauseLink[] {
  const message = trueCondition(ns, "NamespaceDeletionContentFailure");
  if (message === undefined) return [];
  const detail = message.replace(/^Failed to delete all resource types, \d+ remaining: /, "");
  const out: CauseLink[] = [];
  const named = webhooksNamedIn(detail);
  for (const name of named) {
    const found = (reads?.webhooks ?? []).filter((w) => w.webhook.name === name);
    for (const f of found) {
      const w = f.webhook;
      out.push({
        kind: "delete-refused-by-webhook",
        message: detail,
        webhook: {
          configuration: w.configuration,
          configurationKind: w.configurationKind,
          webhook: w.name,
          failurePolicy: w.failurePolicy,
          interceptsDelete: interceptsDelete(w),
          ...(w.service ? { service: `${w.service.namespace}/${w.service.name}` } : {}),
          ...(f.serviceExists !== undefined ? { serviceExists: f.serviceExists } : {}),
          ...(f.readyEndpoints !== undefined ? { readyEndpoints: f.readyEndpoints } : {}),
        },
      });
    }
    if (found.length === 0) out.push({ kind: "delete-refused", message: detail });
  }
  if (named.length > 0) return out;
  const leftovers = [
    ...detail.matchAll(
      /unexpected items still remain in namespace: \S+ for gvr: ([^,]*), Resource=([\w.-]+)/g,
    ),
  ];
  for (const m of leftovers) {
    const group = (m[1] ?? "").split("/")[0] ?? "";
    const resource = `${m[2] ?? ""}${group !== "" ? `.${group}` : ""}`;
    out.push({ kind: "delete-refused", message: m[0], resource });
  }
  if (out.length === 0) out.push({ kind: "delete-refused", message: detail });
  return out;
}

/** Pods being deleted whose node is NotReady or gone: no kubelet will confirm them. Grouped by node. */
function lostNodePods(reads: CauseReads | undefined): Extract<CauseLink, { kind: "pods-on-lost-node" }>[] {
  const byNode = new Map<string, string[]>();
  for (const p of reads?.pods ?? []) {
    if (p.deletionTimestamp === undefined || p.nodeName === undefined) continue;
    if (p.phase === "Succeeded" || p.phase === "Failed") continue;
    const node = reads?.nodes?.get(p.nodeName);
    if (node === undefined || node?.ready?.status === "True") continue;
    byNode.set(p.nodeName, [...(byNode.get(p.nodeName) ?? []), p.name]);
  }
  return [...byNode].map(([name, pods]) => {
    const node = reads?.nodes?.get(name) ?? null;
    return {
      kind: "pods-on-lost-node" as const,
      pods: pods.sort(),
      node: node
        ? {
            name,
            state: "not-ready" as const,
            ...(node.ready ? { ready: node.ready } : {}),
            taints: node.taints,
          }
        : { name, state: "missing" as const, taints: [] },
    };
  });
}

/** Claims kept by pvc-protection, with the scheduled pods that still mount them. */
function claimsInUse(
  blockers: readonly Blocker[],
  reads: CauseReads | undefined,
  stuck: ReadonlySet<string>,
): Extract<CauseLink, { kind: "claim-in-use" }>[] {
  const out: Extract<CauseLink, { kind: "claim-in-use" }>[] = [];
  for (const b of blockers) {
    if (b.kind !== "PersistentVolumeClaim" || !b.finalizers.includes(PVC_PROTECTION)) continue;
    const pods = (reads?.pods ?? [])
      .filter((p) => p.nodeName !== undefined && p.claims.includes(b.name))
      .map((p) => p.name)
      .sort();
    if (pods.length === 0) continue;
    // A mounting pod that a finalizer of its own keeps: the claim waits on that finalizer.
    const podsHeld = blockers
      .filter((p) => p.kind === "Pod" && p.namespace === b.namespace && pods.includes(p.name))
      .map((p) => ({ pod: p.name, finalizers: p.finalizers }));
    out.push({
      kind: "claim-in-use",
      claim: refOf(b),
      pods,
      podsStuck: pods.some((p) => stuck.has(p)),
      podsHeld,
    });
  }
  return out;
}

/** The namespace's own finalizers other than `kubernetes`, each with who may own it. */
function namespaceFinalizerOwners(
  finalizers: readonly string[],
  deployments: readonly DeploymentSnapshot[],
): CauseLink[] {
  return ownersOf(
    finalizers.filter((f) => f !== "kubernetes"),
    deployments,
    { apiVersion: "v1", kind: "Namespace" },
  ).map((o) => ({
    kind: "namespace-finalizer" as const,
    finalizer: o.finalizer,
    controller: o.controller,
    known: o.known,
    candidates: o.candidates.filter((c) => c.kind !== "builtin").map((c) => `${c.namespace}/${c.name}`),
  }));
}

export function blockerKey(o: { resource: string; name: string }): string {
  return `${o.resource}/${o.name}`;
}

export function resourceLabel(type: { resource: string; group: string }): string {
  return type.group === "" ? type.resource : `${type.resource}.${type.group}`;
}

function controllerRef(d: DeploymentSnapshot): ControllerRef {
  return {
    namespace: d.namespace,
    name: d.name,
    kind: "Deployment",
    replicas: d.replicas,
    readyReplicas: d.readyReplicas,
    healthy: d.replicas > 0 && d.readyReplicas >= d.replicas,
    images: d.images,
  };
}

/**
 * The owners of each finalizer, with every candidate controller found in the cluster, and whether
 * anything will remove it (`status`): a known finalizer whose controller is not in the cluster is
 * `not-installed` — nothing will ever remove it — which is a different fix from a degraded one.
 */
export function ownersOf(
  finalizers: readonly string[],
  deployments: readonly DeploymentSnapshot[],
  object: { readonly apiVersion: string; readonly kind: string },
): FinalizerOwner[] {
  return finalizers.map((finalizer) => {
    const info = lookupFinalizer(finalizer);
    if (!info) {
      const domain = finalizer.includes("/") ? finalizer.split("/")[0] : undefined;
      // Not in the table: the Deployments whose name or image names the kind or the domain.
      const guessed = guessControllers(finalizer, object, deployments);
      const candidates = guessed.map((g) => controllerRef(g.deployment));
      return {
        finalizer,
        controller: domain ? `unknown controller (${domain})` : "unknown controller",
        purpose: "not in the table of well-known finalizers",
        cleanup: "unknown: find the controller that added it before removing it",
        candidates,
        known: false,
        status: candidates.some((c) => c.healthy)
          ? "healthy"
          : candidates.length > 0
            ? "degraded"
            : "unknown",
        ...(guessed[0] !== undefined ? { guessedBy: guessed[0].word } : {}),
      };
    }
    const candidates: ControllerRef[] = info.builtin
      ? [
          {
            namespace: "kube-system",
            name: info.controller,
            kind: "builtin",
            replicas: 1,
            readyReplicas: 1,
            healthy: true,
            images: [],
          },
        ]
      : matchControllers(info, deployments, finalizer).map(controllerRef);
    return {
      finalizer,
      controller: info.controller,
      purpose: info.purpose,
      cleanup: info.cleanup,
      candidates,
      known: true,
      status: ownerStatus(info, candidates),
    };
  });
}

function ownerStatus(info: FinalizerInfo, candidates: readonly ControllerRef[]): OwnerStatus {
  if (info.builtin) return "builtin";
  if (candidates.some((c) => c.healthy)) return "healthy";
  if (candidates.length > 0) return "degraded";
  // No matcher, or a controller that may run as something other than a Deployment: absence of a
  // matching Deployment proves nothing, and "not installed" would invite a forced removal.
  if (!info.matcher || info.notOnlyDeployment !== undefined) return "unknown";
  return "not-installed";
}

/**
 * What a forced removal really leaves, once AWS has been read: a TargetGroupBinding's registered
 * targets (never a load balancer), or, for a member of an IngressGroup other live members share,
 * only its own rules and target groups (the load balancer and its groups stay). Otherwise the
 * table's text.
 */
function cleanupFromAws(
  owners: FinalizerOwner[],
  o: Pick<ObjectSnapshot, "kind" | "namespace" | "name">,
  aws: AwsFindings | undefined,
): FinalizerOwner[] {
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

export function analyzeNamespace(input: AnalyzeInput): NamespaceDiagnosis {
  const checkedAt = input.now.toISOString();
  const base = {
    namespace: input.name,
    conditions: [],
    remaining: [],
    blockers: [],
    namespaceFinalizers: [],
    discoveryFailures: [],
    warnings: [...input.warnings],
    checkedAt,
  };
  const ns = input.namespace;
  if (!ns) {
    return {
      ...base,
      phase: "NotFound",
      verdict: "not-found",
      terminatingSeconds: null,
      cause: [{ kind: "namespace-missing" }],
      remedies: [{ kind: "check-name", namespace: input.name }],
    };
  }
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
  const remaining: RemainingResource[] = input.listed
    .filter((l) => l.objects.length > 0)
    .map((l) => ({ resource: resourceLabel(l.type), count: l.objects.length }))
    .sort((a, b) => a.resource.localeCompare(b.resource));

  const blockers: Blocker[] = input.listed
    .flatMap((l) => l.objects.filter(heldByFinalizers))
    .map((o) => {
      const aws = input.aws?.get(blockerKey(o));
      return {
        apiVersion: o.apiVersion,
        kind: o.kind,
        resource: o.resource,
        namespace: o.namespace ?? ns.name,
        name: o.name,
        ...(o.uid ? { uid: o.uid } : {}),
        ...(o.resourceVersion ? { resourceVersion: o.resourceVersion } : {}),
        finalizers: o.finalizers,
        ...(o.deletionTimestamp ? { deletionTimestamp: o.deletionTimestamp } : {}),
        owners: cleanupFromAws(ownersOf(o.finalizers, input.deployments, o), o, aws),
        evidence: [
          ...(input.evidence.get(blockerKey(o)) ?? []),
          ...(aws ? awsEvidence(aws) : []),
          ...argoEvidence(o),
        ],
        ...(o.loadBalancerHostnames ? { loadBalancerHostnames: o.loadBalancerHostnames } : {}),
        ...(aws ? { aws } : {}),
      };
    })
    .sort((a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name));

  // Content is gone only when every type was read: a list that failed or hung may hold anything.
  const unlisted = input.unlisted ?? [];
  // …and none was refused: a refused delete leaves objects the controller's count leaves out.
  const contentGone =
    remaining.length === 0 &&
    unlisted.length === 0 &&
    trueCondition(ns, "NamespaceDeletionContentFailure") === undefined;
  const namespaceFinalizers = contentGone ? [...ns.specFinalizers, ...ns.finalizers] : [];
  const slow = terminatingSeconds >= input.blockedAfterSeconds;
  const failing = blockers.some((b) => b.evidence.some((e) => e.error));
  const orphanedFinalizer = blockers.some((b) =>
    // Only a controller known to be absent makes a finalizer orphaned; `unknown` (it may run as
    // something other than a Deployment) is not proof that nothing will remove it.
    b.owners.some((o) => o.status === "not-installed"),
  );
  const unknownFinalizer = blockers.some((b) => b.owners.some((o) => !o.known));

  // What the namespace's conditions point at: refused deletes, pods no kubelet will confirm, the
  // claims they hold, the namespace's own finalizers.
  const refusals = deleteRefusals(ns, input.causes);
  const lostNodes = lostNodePods(input.causes);
  const stuckPods = new Set(lostNodes.flatMap((l) => l.pods));
  const claims = claimsInUse(blockers, input.causes, stuckPods);
  const nsFinalizers = namespaceFinalizerOwners(namespaceFinalizers, input.deployments);
  const deeper: CauseLink[] = [...refusals, ...lostNodes, ...claims, ...nsFinalizers];

  let verdict: Verdict = "terminating";
  if (input.discoveryFailures.length > 0) verdict = "blocked";
  else if (refusals.length > 0 || lostNodes.some((l) => l.node.state === "not-ready")) verdict = "blocked";
  else if (blockers.length > 0 && (slow || failing || orphanedFinalizer)) verdict = "blocked";
  else if (contentGone && namespaceFinalizers.length > 0 && slow) verdict = "blocked";
  else if (!contentGone && slow && unknownFinalizer) verdict = "blocked";

  const argo = input.argoApplications ? analyzeArgoOwnership(ns.name, input.argoApplications) : undefined;
  const explained = {
    ns,
    verdict,
    remaining,
    unlisted,
    forbidden: input.forbidden ?? [],
    blockers,
    namespaceFinalizers,
    discoveryFailures: input.discoveryFailures,
  };
  // Content the namespace controller cannot delete is not "being removed": the refusal says why.
  const cause = [
    ...causeChain(explained).filter((c) => !(c.kind === "content-deleting" && refusals.length > 0)),
    ...deeper,
  ];
  const deeperSteps = deeperRemedies(ns.name, deeper);
  // Forcing a claim's pvc-protection while a pod mounts it is never the advice: its pods are.
  const held = new Set(claims.map((c) => c.claim.name));
  const forceable = (b: Blocker): boolean =>
    !(
      b.kind === "PersistentVolumeClaim" &&
      held.has(b.name) &&
      b.finalizers.every((f) => f === PVC_PROTECTION)
    );
  // The root cause comes after recovery: "never again" is the last step, not the first.
  const remedies: DiagnosisRemedy[] = [
    ...deeperSteps,
    ...remediesFor(explained, forceable).filter((r) => !(deeperSteps.length > 0 && r.kind === "wait")),
    ...(argo?.redFlag ? [{ kind: "fix-argo-ownership" as const, redFlag: argo.redFlag }] : []),
  ];
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
    namespaceFinalizers,
    discoveryFailures: input.discoveryFailures,
    ...(argo ? { argo } : {}),
    cause,
    remedies,
    ...(recommended !== undefined ? { recommended } : {}),
  };
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
        text: `${failures.length} failure${failures.length === 1 ? "" : "s"} ${last.errorCode}: ${last.errorMessage ?? ""}${last.caller ? ` (caller ${last.caller})` : ""}`,
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

interface ExplainInput {
  readonly ns: NamespaceSnapshot;
  readonly verdict: Verdict;
  readonly remaining: readonly RemainingResource[];
  readonly unlisted: readonly string[];
  readonly forbidden: readonly ForbiddenType[];
  readonly blockers: readonly Blocker[];
  readonly namespaceFinalizers: readonly string[];
  readonly discoveryFailures: readonly DiscoveryFailureFinding[];
}

/** The object a blocker is, as findings name it. */
export function refOf(
  b: Pick<Blocker, "apiVersion" | "kind" | "resource" | "namespace" | "name">,
): ObjectRef {
  return {
    apiVersion: b.apiVersion,
    kind: b.kind,
    resource: b.resource,
    namespace: b.namespace,
    name: b.name,
  };
}

/** `ELB app/k8s-myapp-worker-01f28dfae5/4f1c…` → `k8s-myapp-worker-01f28dfae5`. */
function elbNameOf(description: string): string | undefined {
  return /^ELB (?:app|net|gwy)\/([^/]+)\//.exec(description)?.[1];
}

/** The cause chain: from what remains to the exact object that holds it, typed. */
function causeChain(x: ExplainInput): CauseLink[] {
  const out: CauseLink[] = [];
  if (x.discoveryFailures.length > 0)
    out.push({ kind: "discovery-failing", groupVersions: x.discoveryFailures.map((f) => f.groupVersion) });
  if (x.blockers.length > 0) {
    out.push({
      kind: "finalizers-remain",
      objects: x.blockers.map((b) => ({ ...refOf(b), finalizers: b.finalizers })),
    });
    // The deepest cause of each blocker, most specific first: what holds its security group, the
    // group member that fails, a controller that is not installed, the controller's own error.
    for (const b of x.blockers) {
      const object = refOf(b);
      const missing = b.owners.find((o) => o.status === "not-installed");
      if (missing)
        out.push({
          kind: "controller-missing",
          object,
          controller: missing.controller,
          finalizer: missing.finalizer,
        });
      const firstError = b.evidence.find((e) => e.error && e.source !== "aws" && e.source !== "cloudtrail");
      if (firstError) {
        const who = reportingController(b, firstError);
        out.push({
          kind: "controller-error",
          object,
          from: firstError.from,
          text: firstError.text,
          ...(who ? { controller: who.controller, running: who.running, finalizer: who.finalizer } : {}),
        });
      }
      const culprits = groupCulprits(b);
      if (b.aws?.group && culprits.length > 0)
        out.push({ kind: "group-member-failing", object, group: b.aws.group.name, culprits });
      for (const g of b.aws?.blockedGroups ?? []) {
        const failures = g.deleteFailures.length;
        const firstFailure = [...g.deleteFailures].map((f) => f.time).sort()[0];
        const common = {
          kind: "security-group-held" as const,
          object,
          groupId: g.groupId,
          groupName: g.groupName,
          failures,
          ...(firstFailure !== undefined ? { firstFailure } : {}),
        };
        for (const n of g.networkInterfaces) {
          const lb = elbNameOf(n.description);
          out.push({
            ...common,
            holder: {
              type: "network-interface",
              id: n.id,
              description: n.description,
              status: n.status,
              ...(lb !== undefined ? { loadBalancer: lb } : {}),
            },
          });
        }
        for (const r of g.referencingRules) {
          out.push({
            ...common,
            holder: { type: "rule", id: r.ruleId, groupId: r.groupId, groupName: r.groupName },
          });
        }
      }
    }
  } else if (x.remaining.length > 0) {
    out.push({ kind: "content-deleting", objects: x.remaining.reduce((n, r) => n + r.count, 0) });
  } else if (x.unlisted.length > 0) {
    out.push({ kind: "content-unread", types: x.unlisted, forbidden: x.forbidden });
  } else if (x.namespaceFinalizers.length > 0) {
    out.push({ kind: "namespace-finalizers", finalizers: x.namespaceFinalizers });
  }
  return out;
}

/**
 * The controller an error comes from: the Deployment whose pod logged it, or the only candidate
 * for an Event; else the controller family. `running`: that controller has every replica ready.
 */
function reportingController(
  b: Pick<Blocker, "owners">,
  e: Evidence,
): { controller: string; running: boolean; finalizer: string } | undefined {
  for (const o of b.owners) {
    if (o.status === "builtin") continue;
    // A guessed controller said it only when its own pod logged it.
    if (!o.known && e.source !== "log") continue;
    const live = o.candidates.filter((c) => c.kind !== "builtin");
    if (live.length === 0) continue;
    const byLog =
      e.source === "log"
        ? live
            .filter((c) => e.from.startsWith(`${c.namespace}/${c.name}-`))
            .sort((x, y) => y.name.length - x.name.length)[0]
        : undefined;
    if (e.source === "log" && byLog === undefined) continue;
    const c = byLog ?? (live.length === 1 ? live[0] : undefined);
    if (c) return { controller: c.name, running: c.healthy, finalizer: o.finalizer };
    return { controller: o.controller, running: o.status === "healthy", finalizer: o.finalizer };
  }
  return undefined;
}

/** The fixes of the deeper causes: restore or remove a webhook, recover a node, let a claim go. */
function deeperRemedies(namespace: string, deeper: readonly CauseLink[]): DiagnosisRemedy[] {
  const steps: DiagnosisRemedy[] = [];
  const seen = new Set<string>();
  for (const c of deeper) {
    if (c.kind === "delete-refused-by-webhook") {
      const key = `${c.webhook.configurationKind}/${c.webhook.configuration}/${c.webhook.webhook}`;
      if (seen.has(key)) continue;
      seen.add(key);
      steps.push({ kind: "fix-webhook", webhook: c.webhook });
    } else if (c.kind === "delete-refused") {
      steps.push({
        kind: "find-refusal",
        message: c.message,
        ...(c.resource !== undefined ? { resource: c.resource } : {}),
      });
    } else if (c.kind === "pods-on-lost-node") {
      steps.push({ kind: "recover-node", node: c.node, namespace, pods: c.pods });
    } else if (c.kind === "claim-in-use") {
      steps.push({ kind: "release-claim", claim: c.claim, pods: c.pods, podsHeld: c.podsHeld });
    }
  }
  return steps;
}

/** What to do, in order, typed. */
function remediesFor(x: ExplainInput, forceable: (b: Blocker) => boolean = () => true): DiagnosisRemedy[] {
  const steps: DiagnosisRemedy[] = [];
  const named = x.discoveryFailures.filter((f) => f.apiService !== undefined);
  for (const failure of named) steps.push({ kind: "fix-api-service", failure });
  const unnamed = x.discoveryFailures.filter((f) => f.apiService === undefined).map((f) => f.groupVersion);
  if (unnamed.length > 0) steps.push({ kind: "check-aggregated-apis", groupVersions: unnamed });

  if (x.blockers.length > 0) {
    const seen = new Set<string>();
    for (const b of x.blockers) {
      for (const owner of b.owners) {
        const key = `${owner.controller}|${owner.finalizer}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const live = owner.candidates.filter((c) => c.kind !== "builtin");
        const info = lookupFinalizer(owner.finalizer);
        if (!owner.known) {
          // Its own log naming the object already confirms the guess (fix-controller-error below).
          const confirmed = b.evidence.some(
            (e) =>
              e.error &&
              e.source === "log" &&
              live.some((c) => e.from.startsWith(`${c.namespace}/${c.name}-`)),
          );
          if (!confirmed)
            steps.push({
              kind: "find-finalizer-owner",
              finalizer: owner.finalizer,
              likely: live.map((c) => `${c.namespace}/${c.name}`),
              ...(owner.guessedBy !== undefined ? { word: owner.guessedBy } : {}),
            });
        } else if (owner.status === "not-installed") {
          steps.push({
            kind: "install-controller",
            controller: owner.controller,
            finalizer: owner.finalizer,
            cleanup: owner.cleanup,
          });
        } else if (owner.status === "unknown") {
          steps.push({
            kind: "check-controller-runs",
            controller: owner.controller,
            finalizer: owner.finalizer,
            ...(info?.notOnlyDeployment !== undefined ? { note: info.notOnlyDeployment } : {}),
          });
        } else if (owner.status !== "builtin") {
          for (const c of live.filter((c) => !c.healthy)) {
            steps.push({
              kind: "heal-controller",
              controller: owner.controller,
              finalizer: owner.finalizer,
              deployment: c,
            });
          }
          if (live.length > 1 && info?.shared !== true) {
            steps.push({
              kind: "one-controller",
              controller: owner.controller,
              finalizer: owner.finalizer,
              deployments: live.map((c) => `${c.namespace}/${c.name}`),
            });
          }
        }
      }
      if (b.aws) steps.push(...awsRemedies(b, b.aws));
      const binding = b.aws?.binding;
      if (binding?.deregisterCommand !== undefined && binding.targetGroupArn !== undefined) {
        steps.push({
          kind: "deregister-targets",
          object: refOf(b),
          targetGroupArn: binding.targetGroupArn,
          targetGroupName: binding.targetGroupName ?? binding.targetGroupArn,
          ...(binding.ownerText !== undefined ? { owner: binding.ownerText } : {}),
          targets: registeredTargetsLeft(binding).map(targetSpec),
          command: binding.deregisterCommand,
          actionable: binding.deregisterActionable,
          serving: binding.serving,
          otherBindings: binding.otherBindings,
        });
      }
      // A controller's error is what the controller said (its Events, its logs), never a finding
      // of ours in AWS.
      const firstError = b.evidence.find((e) => e.error && e.source !== "aws" && e.source !== "cloudtrail");
      if (firstError) {
        // A running controller that says why it cannot finish: its words are the fix. The Load
        // Balancer Controller's are read further, in AWS (what holds its groups, its targets).
        const reporter = reportingController(b, firstError);
        const who =
          reporter !== undefined && lookupFinalizer(reporter.finalizer)?.awsLoadBalancer !== true
            ? reporter
            : undefined;
        const letGo = who !== undefined ? lookupFinalizer(who.finalizer)?.letGo : undefined;
        steps.push(
          who?.running === true
            ? {
                kind: "fix-controller-error",
                object: refOf(b),
                controller: who.controller,
                finalizer: who.finalizer,
                text: firstError.text,
                ...(letGo !== undefined ? { letGo } : {}),
              }
            : { kind: "read-controller-error", object: refOf(b), text: firstError.text },
        );
        // The generic hint only when the exact dependent is not already named above.
        // Not for a refusal by IAM: no dependent is involved then.
        if (
          /securityGroup|DependencyViolation/i.test(firstError.text) &&
          !/UnauthorizedOperation|AccessDenied|not authorized/i.test(firstError.text) &&
          !b.aws?.blockedGroups.length
        )
          steps.push({ kind: "find-group-dependents" });
      }
    }
    // Forcing is the advice only when no fix the operator can apply lets the controller finish.
    const first = x.blockers.find((b) => forceable(b) && forceAdvisedFor(b));
    if (first && x.verdict === "blocked")
      steps.push({
        kind: "force-finalizer",
        object: refOf(first),
        loadBalancer: first.finalizers.some((f) => lookupFinalizer(f)?.awsLoadBalancer === true),
      });
  } else if (x.remaining.length > 0) {
    steps.push({ kind: "wait", namespace: x.ns.name });
  } else if (x.namespaceFinalizers.length > 0) {
    steps.push(
      x.namespaceFinalizers.every((f) => f === "kubernetes")
        ? { kind: "namespace-finalizer-builtin" }
        : { kind: "namespace-finalizer-custom", finalizers: x.namespaceFinalizers },
    );
  }
  // What RBAC refuses stays unread however often one asks: say what grants it.
  if (x.forbidden.length > 0) steps.push({ kind: "grant-list", types: x.forbidden });
  return steps;
}

/**
 * The one action to lead with: a fix the operator can apply that lets the controller finish by
 * itself comes before anything forced; forcing only when it is the advice; otherwise the first step.
 */
function recommend(remedies: readonly DiagnosisRemedy[], verdict: Verdict): number | undefined {
  if (remedies.length === 0 || verdict === "active" || verdict === "not-found") return undefined;
  const nonForced = remedies.findIndex(
    (r) =>
      r.kind === "fix-webhook" ||
      r.kind === "find-refusal" ||
      r.kind === "recover-node" ||
      r.kind === "fix-controller-error" ||
      (r.kind === "release-dependent" && r.fix.actionable) ||
      (r.kind === "deregister-targets" && r.actionable) ||
      r.kind === "fix-group-member",
  );
  if (nonForced >= 0) return nonForced;
  const force = remedies.findIndex((r) => r.kind === "force-finalizer");
  if (force >= 0) return force;
  const fix = remedies.findIndex((r) => r.kind !== "fix-argo-ownership" && r.kind !== "leave-in-place");
  return fix >= 0 ? fix : undefined;
}

/**
 * Whether forcing the blocker's finalizer is the advice: not when a fix the operator can apply now
 * (revoke a rule, take a group off an interface, fix another member of its IngressGroup) lets the
 * controller finish by itself.
 */
export function forceAdvisedFor(b: Pick<Blocker, "aws" | "evidence" | "namespace" | "name">): boolean {
  if (!b.aws) return true;
  if (!b.aws.forceAdvised) return false;
  return groupCulprits(b).length === 0;
}

/** Live members of the blocker's IngressGroup that the controller's errors name. */
function groupCulprits(b: Pick<Blocker, "aws" | "evidence" | "namespace" | "name">): string[] {
  const group = b.aws?.group;
  if (!group) return [];
  const errors = b.evidence.filter((e) => e.error).map((e) => e.text);
  const out: string[] = [];
  for (const m of group.members) {
    if (m.deleting || (m.namespace === b.namespace && m.name === b.name)) continue;
    const cert = m.certificateArns.find((c) => errors.some((t) => t.includes(c)));
    if (cert !== undefined)
      out.push(`${m.ref} (its certificate ${cert} is what the controller's error names)`);
    else if (errors.some((t) => t.includes(`${m.namespace}/${m.name}`)))
      out.push(`${m.ref} (named in the controller's error)`);
  }
  return out;
}

/** Remedies from the AWS side: who stays, and the least destructive fix for each dependent. */
function awsRemedies(b: Blocker, aws: AwsFindings): DiagnosisRemedy[] {
  const steps: DiagnosisRemedy[] = [];
  const culprits = groupCulprits(b);
  if (aws.group && culprits.length > 0)
    steps.push({ kind: "fix-group-member", object: refOf(b), group: aws.group.name, culprits });
  if (aws.stays.length > 0) {
    steps.push({
      kind: "leave-in-place",
      usedBy: [...new Set(aws.stays.flatMap((x) => x.usedBy))],
      resources: aws.stays.map(
        (x) =>
          `${x.type === "SecurityGroup" ? "security group" : x.type === "TargetGroup" ? "target group" : "load balancer"} ${x.name ?? x.id}`,
      ),
    });
  }
  for (const g of aws.blockedGroups) {
    for (const fix of g.remedies) {
      if (fix.kind === "live-dependent") continue;
      steps.push({
        kind: "release-dependent",
        object: refOf(b),
        groupId: g.groupId,
        groupName: g.groupName,
        fix,
      });
    }
  }
  return steps;
}
