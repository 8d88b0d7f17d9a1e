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
import { lookupFinalizer, matchControllers, type FinalizerInfo } from "./finalizers.js";
import { analyzeArgoOwnership } from "./argo.js";
import { describeDependent, type AwsFindings } from "./aws.js";
import type {
  Blocker,
  ControllerRef,
  DiscoveryFailureFinding,
  Evidence,
  FinalizerOwner,
  NamespaceDiagnosis,
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
  readonly now: Date;
  readonly blockedAfterSeconds: number;
  /** Argo CD Applications of the cluster, when Argo CD is installed and readable. */
  readonly argoApplications?: readonly ArgoApplicationSnapshot[];
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
): FinalizerOwner[] {
  return finalizers.map((finalizer) => {
    const info = lookupFinalizer(finalizer);
    if (!info) {
      const domain = finalizer.includes("/") ? finalizer.split("/")[0] : undefined;
      return {
        finalizer,
        controller: domain ? `unknown controller (${domain})` : "unknown controller",
        purpose: "not in the table of well-known finalizers",
        cleanup: "unknown: find the controller that added it before removing it",
        candidates: [],
        known: false,
        status: "unknown",
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

export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${Math.floor(seconds)}s`;
  const m = Math.floor(seconds / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${m % 60 > 0 ? ` ${m % 60}m` : ""}`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

function objectRef(b: { kind: string; namespace: string; name: string }): string {
  return `${b.kind} ${b.namespace}/${b.name}`;
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
      summary: `Namespace ${input.name} does not exist: it was deleted, or the name is misspelt.`,
      nextSteps: [
        "Check the name against `kubectl get namespaces`; a namespace that is gone needs no unblocking.",
      ],
    };
  }
  if (!ns.deletionTimestamp) {
    return {
      ...base,
      phase: ns.phase,
      verdict: "active",
      terminatingSeconds: null,
      conditions: ns.conditions,
      summary: `Namespace ${ns.name} is ${ns.phase}: it is not being deleted, so nothing blocks it.`,
      nextSteps: [],
    };
  }

  const terminatingSeconds = Math.max(0, (input.now.getTime() - Date.parse(ns.deletionTimestamp)) / 1000);
  const remaining: RemainingResource[] = input.listed
    .filter((l) => l.objects.length > 0)
    .map((l) => ({ resource: resourceLabel(l.type), count: l.objects.length }))
    .sort((a, b) => a.resource.localeCompare(b.resource));

  const blockers: Blocker[] = input.listed
    .flatMap((l) => l.objects.filter((o) => o.finalizers.length > 0))
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
        owners: ownersOf(o.finalizers, input.deployments),
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

  const contentGone = remaining.length === 0;
  const namespaceFinalizers = contentGone ? [...ns.specFinalizers, ...ns.finalizers] : [];
  const slow = terminatingSeconds >= input.blockedAfterSeconds;
  const failing = blockers.some((b) => b.evidence.some((e) => e.error));
  const orphanedFinalizer = blockers.some((b) =>
    // Only a controller known to be absent makes a finalizer orphaned; `unknown` (it may run as
    // something other than a Deployment) is not proof that nothing will remove it.
    b.owners.some((o) => o.status === "not-installed"),
  );
  const unknownFinalizer = blockers.some((b) => b.owners.some((o) => !o.known));

  let verdict: Verdict = "terminating";
  if (input.discoveryFailures.length > 0) verdict = "blocked";
  else if (blockers.length > 0 && (slow || failing || orphanedFinalizer)) verdict = "blocked";
  else if (contentGone && namespaceFinalizers.length > 0 && slow) verdict = "blocked";
  else if (!contentGone && slow && unknownFinalizer) verdict = "blocked";

  const argo = input.argoApplications ? analyzeArgoOwnership(ns.name, input.argoApplications) : undefined;
  const { summary, nextSteps } = explain({
    ns,
    verdict,
    terminatingSeconds,
    remaining,
    blockers,
    namespaceFinalizers,
    discoveryFailures: input.discoveryFailures,
    blockedAfterSeconds: input.blockedAfterSeconds,
  });

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
    summary,
    // The root cause comes after recovery: "never again" is the last step, not the first.
    nextSteps: argo?.redFlag
      ? [...nextSteps, `Root cause to fix after recovery: ${argo.redFlag}`]
      : nextSteps,
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
  readonly terminatingSeconds: number;
  readonly remaining: readonly RemainingResource[];
  readonly blockers: readonly Blocker[];
  readonly namespaceFinalizers: readonly string[];
  readonly discoveryFailures: readonly DiscoveryFailureFinding[];
  readonly blockedAfterSeconds: number;
}

function explain(x: ExplainInput): { summary: string; nextSteps: string[] } {
  const since = formatDuration(x.terminatingSeconds);
  const steps: string[] = [];
  const parts: string[] = [];

  if (x.discoveryFailures.length > 0) {
    const gvs = x.discoveryFailures.map((f) => f.groupVersion).join(", ");
    parts.push(
      `API discovery fails for ${gvs}: the namespace controller cannot list that group, so it can never confirm the namespace is empty`,
    );
    const named = x.discoveryFailures.filter((f) => f.apiService !== undefined);
    for (const f of named) steps.push(apiServiceStep(f));
    const unnamed = x.discoveryFailures.filter((f) => f.apiService === undefined).map((f) => f.groupVersion);
    if (unnamed.length > 0) {
      steps.push(
        `Check the aggregated API: \`kubectl get apiservice\` and look for ${unnamed.join(", ")} with AVAILABLE=False; fix its backing service, or delete the APIService if that add-on was removed.`,
      );
    }
  }

  if (x.blockers.length > 0) {
    const list = x.blockers
      .slice(0, 3)
      .map((b) => `${objectRef(b)} (${b.finalizers.join(", ")})`)
      .join("; ");
    const more = x.blockers.length > 3 ? ` and ${x.blockers.length - 3} more` : "";
    parts.push(
      `${x.blockers.length} object${x.blockers.length === 1 ? "" : "s"} with finalizers remain: ${list}${more}`,
    );

    const seen = new Set<string>();
    for (const b of x.blockers) {
      for (const owner of b.owners) {
        const key = `${owner.controller}|${owner.finalizer}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const live = owner.candidates.filter((c) => c.kind !== "builtin");
        const info = lookupFinalizer(owner.finalizer);
        if (!owner.known) {
          steps.push(
            `\`${owner.finalizer}\` is not a well-known finalizer: find the controller that adds it (search your operators for that string) before removing it.`,
          );
        } else if (owner.status === "not-installed") {
          steps.push(
            `${owner.controller} is not installed in this cluster (no Deployment matches its chart labels, name or image), so nothing will ever remove \`${owner.finalizer}\`: reinstall ${owner.controller} to let it finish its clean-up, or remove the finalizer with approval once you have a clean-up plan for ${owner.cleanup}.`,
          );
        } else if (owner.status === "unknown") {
          steps.push(
            `Could not tell whether ${owner.controller} runs${info?.notOnlyDeployment !== undefined ? ` (${info.notOnlyDeployment})` : ""}: check that it does before anything else — it is what removes \`${owner.finalizer}\`.`,
          );
        } else if (owner.status !== "builtin") {
          const unhealthy = live.filter((c) => !c.healthy);
          for (const c of unhealthy) {
            steps.push(
              `${owner.controller} \`${c.namespace}/${c.name}\` has ${c.readyReplicas}/${c.replicas} ready replicas: make it healthy first, it is the one that removes \`${owner.finalizer}\`.`,
            );
          }
          if (live.length > 1 && info?.shared !== true) {
            steps.push(
              `${live.length} ${owner.controller} deployments may reconcile \`${owner.finalizer}\` (${live
                .map((c) => `${c.namespace}/${c.name}`)
                .join(", ")}): check that only one serves this cluster and ingress class.`,
            );
          }
        }
      }
      if (b.aws) steps.push(...awsSteps(b, b.aws));
      const errors = b.evidence.filter((e) => e.error);
      const firstError = errors[0];
      if (firstError) {
        steps.push(
          `The controller reports an error for ${objectRef(b)}: "${truncate(firstError.text, 200)}".`,
        );
        // The generic hint only when the exact dependent is not already named above.
        if (/securityGroup|DependencyViolation/i.test(firstError.text) && !b.aws?.blockedGroups.length) {
          steps.push(
            "A security group cannot be deleted while something depends on it: look for ENIs that still use it (`aws ec2 describe-network-interfaces --filters Name=group-id,Values=<sg>`) and rules in other groups that reference it (`ip-permission.group-id`).",
          );
        }
      }
    }
    // Forcing is the advice only when no fix the operator can apply lets the controller finish.
    const first = x.blockers.find((b) => forceAdvisedFor(b));
    if (first && x.verdict === "blocked") {
      steps.push(
        `Recovery first, once the cause is confirmed and a clean-up plan exists: \`/unstuck finalize ${first.kind.toLowerCase()}/${first.name} -n ${first.namespace} --reason "<why>"\` asks a second person to approve removing the finalizer; afterwards check for orphaned AWS resources.`,
      );
    }
  } else if (x.remaining.length > 0) {
    const total = x.remaining.reduce((n, r) => n + r.count, 0);
    parts.push(
      `deletion is in progress: ${total} object${total === 1 ? "" : "s"} without finalizers are still being removed`,
    );
    steps.push("Nothing blocks it yet; check again in a minute (`/unstuck watch ns " + x.ns.name + "`).");
  } else if (x.namespaceFinalizers.length > 0) {
    parts.push(
      `all content is gone but the namespace itself still carries finalizers ${x.namespaceFinalizers.map((f) => `\`${f}\``).join(", ")}`,
    );
    if (x.namespaceFinalizers.every((f) => f === "kubernetes")) {
      steps.push(
        "The namespace controller removes `kubernetes` within seconds once content is gone; if it persists, check kube-controller-manager and any failing API discovery.",
      );
    } else {
      steps.push(
        "A custom finalizer on the namespace itself: find the controller that set it; only it should remove it (via the `/finalize` subresource).",
      );
    }
  }

  const verdictText =
    x.verdict === "blocked"
      ? `Namespace ${x.ns.name} is stuck in Terminating (for ${since}) — blocked`
      : `Namespace ${x.ns.name} is Terminating (for ${since}) and still progressing`;
  return {
    summary: parts.length > 0 ? `${verdictText}: ${parts.join("; ")}.` : `${verdictText}.`,
    nextSteps: steps,
  };
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

/** Next steps from the AWS side: who stays, and the least destructive fix for each dependent. */
function awsSteps(b: Blocker, aws: AwsFindings): string[] {
  const steps: string[] = [];
  const culprits = groupCulprits(b);
  if (aws.group && culprits.length > 0) {
    steps.push(
      `IngressGroup \`${aws.group.name}\` fails to build because of another member, ${culprits.join(", ")}: fix that member and the controller removes ${objectRef(b)} from the group by itself — forcing its finalizer is not needed, and deleting the group's load balancer or security groups would break the live members.`,
    );
  }
  if (aws.stays.length > 0) {
    // One step for everything that stays: who uses it is what the operator needs, not a list of ids.
    const users = [...new Set(aws.stays.flatMap((x) => x.usedBy))];
    const names = aws.stays.map(
      (x) =>
        `${x.type === "SecurityGroup" ? "security group" : x.type === "TargetGroup" ? "target group" : "load balancer"} ${x.name ?? x.id}`,
    );
    steps.push(
      `Leave in place — still in use by ${users.slice(0, 3).join(", ")}${users.length > 3 ? ` and ${users.length - 3} more` : ""}: ${names.slice(0, 5).join(", ")}${names.length > 5 ? ` and ${names.length - 5} more` : ""}. Deleting any of them, or their interfaces and rules, would break live traffic.`,
    );
  }
  for (const g of aws.blockedGroups) {
    for (const r of g.remedies) {
      if (r.kind === "live-dependent") continue;
      const cmds = r.commands.map((c) => `\`${c}\``).join(" then ");
      steps.push(
        r.actionable
          ? `${g.groupId} (${g.groupName}) is held by the ${r.what}: ${r.action}${cmds ? ` — ${cmds}` : ""}. The controller's next retry then deletes the group and removes the finalizer by itself (no forced removal needed).`
          : `${g.groupId} (${g.groupName}) is held by the ${r.what}: ${r.action}${cmds ? ` (${cmds})` : ""}.`,
      );
    }
  }
  return steps;
}

/**
 * One failing group-version, named by its APIService: whether it is Available, which Service backs
 * it and how many ready endpoints that Service has — the three facts that decide the fix.
 */
function apiServiceStep(f: DiscoveryFailureFinding): string {
  const a = f.apiService;
  if (!a) return "";
  const state =
    a.available === "True"
      ? `APIService ${a.name} reports Available, yet discovery of ${f.groupVersion} fails (${truncate(f.message, 120)})`
      : `APIService ${a.name} is not Available${a.reason ? ` (${a.reason})` : ""}${a.message ? `: "${truncate(a.message, 200)}"` : ""}`;
  if (!a.service) {
    return `${state}. It is served by kube-apiserver itself (no backing Service): check the API server.`;
  }
  const endpoints =
    a.readyEndpoints === undefined
      ? `its Service ${a.service} (ready endpoints could not be read)`
      : `its Service ${a.service} has ${a.readyEndpoints} ready endpoint${a.readyEndpoints === 1 ? "" : "s"}`;
  const fix =
    a.readyEndpoints === 0
      ? `fix the pods behind ${a.service} (\`kubectl get pods -n ${a.service.split("/")[0] ?? ""}\`)`
      : `fix ${a.service} (its pods answer, but not the API server's discovery check: network policy, security group or certificate)`;
  return `${state}; ${endpoints} → ${fix}, or \`kubectl delete apiservice ${a.name}\` if that add-on was uninstalled.`;
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}
