import type { ArgoOwnership } from "./argo.js";
import type { Condition } from "../kube/types.js";
import type { AwsFindings } from "./aws.js";
import type { Remedy as AwsRemedy } from "../edge/remedies.js";

/** Verdicts of `ns`: `terminating` is still progressing, `blocked` will not finish on its own. */
export const Verdict = {
  Active: "active",
  NotFound: "not-found",
  Terminating: "terminating",
  Blocked: "blocked",
} as const;
export type Verdict = (typeof Verdict)[keyof typeof Verdict];

export interface ControllerRef {
  readonly namespace: string;
  readonly name: string;
  readonly kind: "Deployment" | "StatefulSet" | "DaemonSet" | "builtin";
  readonly replicas: number;
  readonly readyReplicas: number;
  readonly healthy: boolean;
  readonly images: readonly string[];
}

export interface FinalizerOwner {
  readonly finalizer: string;
  /** Human name of the controller family, e.g. "AWS Load Balancer Controller". */
  readonly controller: string;
  /** What the finalizer guards, in one line. */
  readonly purpose: string;
  /** What removing it by hand would leave behind (the clean-up plan). */
  readonly cleanup: string;
  /** Controllers found in the cluster that may own it; several are all listed. */
  readonly candidates: readonly ControllerRef[];
  /** `true` when the table knows this finalizer. */
  readonly known: boolean;
  /**
   * An unknown finalizer's `candidates` are a guess: the word of its kind or domain that their
   * name or image carries.
   */
  readonly guessedBy?: string;
  /**
   * Whether anything will remove it: `builtin` (Kubernetes itself), `healthy` (a matching controller
   * has all replicas ready), `degraded` (found, but none has all replicas ready), `not-installed`
   * (a known finalizer whose controller is nowhere in the cluster: nothing will ever remove it),
   * `unknown` (an unknown finalizer, or a controller this check cannot see).
   */
  readonly status: OwnerStatus;
}

export const OwnerStatus = {
  Builtin: "builtin",
  Healthy: "healthy",
  Degraded: "degraded",
  NotInstalled: "not-installed",
  Unknown: "unknown",
} as const;
export type OwnerStatus = (typeof OwnerStatus)[keyof typeof OwnerStatus];

/** The aggregated API behind a group-version whose discovery fails, and what backs it. */
export interface ApiServiceFinding {
  /** e.g. `v1beta1.metrics.k8s.io`. */
  readonly name: string;
  /** `namespace/name` of `spec.service`; absent for a local (built-in) APIService. */
  readonly service?: string;
  /** The `Available` condition's status: `True`, `False` or `Unknown` (no condition yet). */
  readonly available: string;
  readonly reason?: string;
  readonly message?: string;
  /** Ready endpoints of the backing Service; absent when they could not be read. */
  readonly readyEndpoints?: number;
}

export interface DiscoveryFailureFinding {
  readonly groupVersion: string;
  readonly message: string;
  /** The APIService serving this group-version, when one exists and could be read. */
  readonly apiService?: ApiServiceFinding;
}

export interface Evidence {
  readonly source: "log" | "event" | "condition" | "discovery" | "aws" | "cloudtrail";
  /** e.g. `kube-system/aws-load-balancer-controller-7d9f-abcde/controller` or `Event Ingress/x`. */
  readonly from: string;
  readonly text: string;
  readonly time?: string;
  /** `true` when it reports an error (rather than progress). */
  readonly error: boolean;
}

export interface Blocker {
  readonly apiVersion: string;
  readonly kind: string;
  readonly resource: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly finalizers: readonly string[];
  readonly deletionTimestamp?: string;
  readonly owners: readonly FinalizerOwner[];
  readonly evidence: readonly Evidence[];
  readonly loadBalancerHostnames?: readonly string[];
  /** For Load Balancer Controller finalizers: the stack's AWS resources and what holds them. */
  readonly aws?: AwsFindings;
}

export interface RemainingResource {
  /** `ingresses.networking.k8s.io`, or `pods` for the core group. */
  readonly resource: string;
  readonly count: number;
}

export interface NamespaceDiagnosis {
  readonly namespace: string;
  readonly phase: string;
  readonly verdict: Verdict;
  /** Seconds since `deletionTimestamp`, or `null` when not terminating. */
  readonly terminatingSeconds: number | null;
  readonly deletionTimestamp?: string;
  readonly conditions: readonly Condition[];
  readonly remaining: readonly RemainingResource[];
  readonly blockers: readonly Blocker[];
  /** The namespace's own `spec.finalizers` when they are what remains. */
  readonly namespaceFinalizers: readonly string[];
  readonly discoveryFailures: readonly DiscoveryFailureFinding[];
  /** Argo CD Applications that manage the namespace or its objects; `redFlag` when ownership is doubled. */
  readonly argo?: ArgoOwnership;
  /**
   * Why, from the symptom to the deepest cause found (typed; renderers word it). The last link is
   * the root of what blocks the namespace now, e.g. a security group held by an interface.
   */
  readonly cause: readonly CauseLink[];
  /** What to do, in order (typed; renderers word them and name the command as configured). */
  readonly remedies: readonly DiagnosisRemedy[];
  /** The one action to lead with, an index into `remedies`; absent when there is nothing to do. */
  readonly recommended?: number;
  /** What could not be read (partial results say so). */
  readonly warnings: readonly string[];
  readonly checkedAt: string;
  /** How the namespace's content was found; absent when it was not looked at (active, not found). */
  readonly scan?: ContentScan;
}

/**
 * How the diagnosis found what is left in a Terminating namespace. `report`: only the types the
 * namespace controller's own report names (its `NamespaceContentRemaining` and
 * `NamespaceFinalizersRemaining` conditions) were listed, and what they hold agreed with it.
 * `full`: every namespaced type was listed, for `reason`.
 */
export type ContentScan =
  | { readonly path: "report"; readonly listedTypes: number }
  | { readonly path: "full"; readonly listedTypes: number; readonly reason: ScanFallback };

/** Why the namespace controller's report was not enough. */
export type ScanFallback =
  /** The condition is not there yet (the controller has not made a pass). */
  | { readonly kind: "no-report"; readonly condition: string }
  | { readonly kind: "report-unknown"; readonly condition: string }
  /** The condition's message is not in the controller's wording. */
  | { readonly kind: "report-unreadable"; readonly condition: string }
  /** Discovery failed: for the namespace controller (its report may miss types) or for the bot. */
  | { readonly kind: "discovery-failed"; readonly by: "namespace-controller" | "unstuck" }
  /** The controller could not delete some content, and says so in words other than a count. */
  | { readonly kind: "content-failure" }
  /** The report names a type discovery does not serve as listable. */
  | { readonly kind: "unknown-type"; readonly resource: string }
  /** A type holds another number of objects than the report says. */
  | {
      readonly kind: "count-mismatch";
      readonly resource: string;
      readonly reported: number;
      readonly found: number;
    }
  /** The types the report names hold another number of objects with this finalizer than it says. */
  | {
      readonly kind: "finalizer-mismatch";
      readonly finalizer: string;
      readonly reported: number;
      readonly found: number;
    };

/** An object named in a finding: enough to show it and to build a request for it. */
export interface ObjectRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly resource: string;
  readonly namespace: string;
  readonly name: string;
}

/** An admission webhook the namespace controller's deletes fail on, with what backs it. */
export interface WebhookRef {
  readonly configuration: string;
  readonly configurationKind: "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration";
  readonly webhook: string;
  readonly failurePolicy: string;
  /** Its rules intercept `DELETE` (or `*`). */
  readonly interceptsDelete: boolean;
  /** `namespace/name` of the Service it calls; absent for a URL webhook. */
  readonly service?: string;
  /** `false`: the Service does not exist; absent when it could not be read. */
  readonly serviceExists?: boolean;
  /** Ready endpoints of that Service; absent when not read (or the Service is gone). */
  readonly readyEndpoints?: number;
}

/** A Node that will not finish its pods' deletion, as read (or its absence). */
export interface NodeRef {
  readonly name: string;
  /** `not-ready`: the Node is there but its Ready condition is not True; `missing`: no such Node. */
  readonly state: "not-ready" | "missing";
  /** The Ready condition (status, reason, message, since), when the Node reports one. */
  readonly ready?: {
    readonly status: string;
    readonly reason?: string;
    readonly message?: string;
    readonly lastTransitionTime?: string;
  };
  readonly taints: readonly string[];
}

/** One link of the cause chain, from the symptom to the root. */
export type CauseLink =
  | { readonly kind: "namespace-missing" }
  | { readonly kind: "not-deleting"; readonly phase: string }
  | { readonly kind: "discovery-failing"; readonly groupVersions: readonly string[] }
  /** Objects whose finalizers are left (all of them; renderers show a few). */
  | {
      readonly kind: "finalizers-remain";
      readonly objects: readonly (ObjectRef & { readonly finalizers: readonly string[] })[];
    }
  | { readonly kind: "content-deleting"; readonly objects: number }
  /**
   * Some of the namespace's types could not be listed (refused, failed, or cut off by the
   * deadline); `forbidden`: those RBAC refuses, which asking again will not change.
   */
  | {
      readonly kind: "content-unread";
      readonly types: readonly string[];
      readonly forbidden: readonly ForbiddenType[];
    }
  | { readonly kind: "namespace-finalizers"; readonly finalizers: readonly string[] }
  /** The finalizer's controller is not in the cluster: nothing will ever remove it. */
  | {
      readonly kind: "controller-missing";
      readonly object: ObjectRef;
      readonly controller: string;
      readonly finalizer: string;
    }
  /** The controller's own error for the object (log or event). */
  | {
      readonly kind: "controller-error";
      readonly object: ObjectRef;
      readonly from: string;
      readonly text: string;
      /**
       * The controller that reports it: its Deployment's name when the log line (or the only
       * candidate) says which, else the controller family's name.
       */
      readonly controller?: string;
      /** `true` when that controller is installed with every replica ready: it runs, yet fails to finalize. */
      readonly running?: boolean;
      /** The finalizer it fails to remove. */
      readonly finalizer?: string;
    }
  /** A dying security group the controller cannot delete, and the exact object holding it. */
  | {
      readonly kind: "security-group-held";
      readonly object: ObjectRef;
      readonly groupId: string;
      readonly groupName: string;
      readonly holder:
        | {
            readonly type: "network-interface";
            readonly id: string;
            readonly description: string;
            readonly status: string;
            /** The ELB load balancer the interface belongs to (`ELB app/<name>/…`), when it is one. */
            readonly loadBalancer?: string;
          }
        | {
            readonly type: "rule";
            readonly id: string;
            readonly groupId: string;
            readonly groupName: string;
          };
      /** CloudTrail `DeleteSecurityGroup` failures for the group and the earliest one's time. */
      readonly failures: number;
      readonly firstFailure?: string;
    }
  /**
   * The namespace controller's deletes are refused by an admission webhook it cannot call
   * (`NamespaceDeletionContentFailure`): the webhook, its Service and whether anything answers there.
   */
  | { readonly kind: "delete-refused-by-webhook"; readonly webhook: WebhookRef; readonly message: string }
  /** Another refusal the `NamespaceDeletionContentFailure` condition reports, verbatim. */
  | { readonly kind: "delete-refused"; readonly message: string; readonly resource?: string }
  /** Pods Terminating for good: their node's kubelet is not there to confirm the deletion. */
  | { readonly kind: "pods-on-lost-node"; readonly node: NodeRef; readonly pods: readonly string[] }
  /** A claim kept by `kubernetes.io/pvc-protection` because pods (of its namespace) still mount it. */
  | {
      readonly kind: "claim-in-use";
      readonly claim: ObjectRef;
      readonly pods: readonly string[];
      /** Those pods are themselves stuck Terminating (their node is lost). */
      readonly podsStuck: boolean;
      /** Those of the pods that their own finalizers keep: the next link of the chain. */
      readonly podsHeld: readonly { readonly pod: string; readonly finalizers: readonly string[] }[];
    }
  /** A finalizer of the namespace itself other than `kubernetes`, and who may own it. */
  | {
      readonly kind: "namespace-finalizer";
      readonly finalizer: string;
      readonly controller: string;
      readonly known: boolean;
      /** `namespace/name` of Deployments that match its owner. */
      readonly candidates: readonly string[];
    }
  /** Another member of the object's IngressGroup is what the controller's errors name. */
  | {
      readonly kind: "group-member-failing";
      readonly object: ObjectRef;
      readonly group: string;
      readonly culprits: readonly string[];
    };

/** A namespaced type the bot may not `list`: a 403 that will not go away by asking again. */
export interface ForbiddenType {
  readonly group: string;
  readonly resource: string;
}

/** One thing to do, typed; the renderers word it (and name the slash command as configured). */
export type DiagnosisRemedy =
  /** `similar`: existing namespaces within a typo of the name asked for, nearest first. */
  | { readonly kind: "check-name"; readonly namespace: string; readonly similar: readonly string[] }
  /** Let the bot list the types RBAC refuses it (the chart's grant, or the ServiceAccount's). */
  | { readonly kind: "grant-list"; readonly types: readonly ForbiddenType[] }
  | { readonly kind: "fix-api-service"; readonly failure: DiscoveryFailureFinding }
  | { readonly kind: "check-aggregated-apis"; readonly groupVersions: readonly string[] }
  /** `likely`: Deployments whose name or image carries `word` (its kind or domain) — a guess. */
  | {
      readonly kind: "find-finalizer-owner";
      readonly finalizer: string;
      readonly likely: readonly string[];
      readonly word?: string;
    }
  | {
      readonly kind: "install-controller";
      readonly controller: string;
      readonly finalizer: string;
      readonly cleanup: string;
    }
  | {
      readonly kind: "check-controller-runs";
      readonly controller: string;
      readonly finalizer: string;
      /** Why absence of a Deployment proves nothing (e.g. "it may run as a DaemonSet"). */
      readonly note?: string;
    }
  | {
      readonly kind: "heal-controller";
      readonly controller: string;
      readonly finalizer: string;
      readonly deployment: ControllerRef;
    }
  | {
      readonly kind: "one-controller";
      readonly controller: string;
      readonly finalizer: string;
      /** `namespace/name` of every candidate deployment. */
      readonly deployments: readonly string[];
    }
  | {
      readonly kind: "fix-group-member";
      readonly object: ObjectRef;
      readonly group: string;
      readonly culprits: readonly string[];
    }
  | {
      readonly kind: "leave-in-place";
      readonly usedBy: readonly string[];
      /** e.g. `security group k8s-…`, `target group …`. */
      readonly resources: readonly string[];
    }
  /**
   * Release what holds a dying security group. `fix.actionable`: the operator can do it now and the
   * controller then finishes by itself (no forced removal); otherwise it is a wait on AWS.
   */
  | {
      readonly kind: "release-dependent";
      readonly object: ObjectRef;
      readonly groupId: string;
      readonly groupName: string;
      readonly fix: AwsRemedy;
    }
  | { readonly kind: "read-controller-error"; readonly object: ObjectRef; readonly text: string }
  /**
   * The controller runs and says why it cannot finish (its log lines name the object): what it
   * reports is the fix, before any forcing; `letGo`: its own way to release the object without
   * deleting what it stands for.
   */
  | {
      readonly kind: "fix-controller-error";
      readonly object: ObjectRef;
      readonly controller: string;
      readonly finalizer: string;
      readonly text: string;
      readonly letGo?: string;
    }
  /**
   * A TargetGroupBinding's targets still registered in its target group: deregistering them lets
   * the controller finish (`actionable`), and the target group itself stays (it is not the binding's).
   */
  | {
      readonly kind: "deregister-targets";
      readonly object: ObjectRef;
      readonly targetGroupArn: string;
      readonly targetGroupName: string;
      /** Who owns the target group, in words. */
      readonly owner?: string;
      /** `Id=…,Port=…` of each target still registered. */
      readonly targets: readonly string[];
      readonly command: string;
      /**
       * False when another live binding shares the target group (some targets may be its own) or
       * when a target still serves traffic (`serving`).
       */
      readonly actionable: boolean;
      /** Targets ELB reports healthy: deregistering them is an outage, so never the step. */
      readonly serving: readonly string[];
      readonly otherBindings: readonly string[];
    }
  | { readonly kind: "find-group-dependents" }
  /** Ask a second person to approve removing the object's finalizers (recovery first). */
  /** `loadBalancer`: what it leaves is in AWS (a load balancer controller's finalizer). */
  | { readonly kind: "force-finalizer"; readonly object: ObjectRef; readonly loadBalancer: boolean }
  | { readonly kind: "wait"; readonly namespace: string }
  | { readonly kind: "namespace-finalizer-builtin" }
  | { readonly kind: "namespace-finalizer-custom"; readonly finalizers: readonly string[] }
  /** Restore the webhook's Service, or remove its configuration if the add-on is gone. */
  | { readonly kind: "fix-webhook"; readonly webhook: WebhookRef }
  /** The namespace controller's deletes fail with a message no webhook configuration we read explains. */
  | { readonly kind: "find-refusal"; readonly message: string; readonly resource?: string }
  /** Bring the node back, or remove it if its machine is gone; force-deleting pods comes last. */
  | {
      readonly kind: "recover-node";
      readonly node: NodeRef;
      readonly namespace: string;
      readonly pods: readonly string[];
    }
  /** The claim goes by itself once the pods that mount it are gone: never force its finalizer. */
  | {
      readonly kind: "release-claim";
      readonly claim: ObjectRef;
      readonly pods: readonly string[];
      readonly podsHeld: readonly { readonly pod: string; readonly finalizers: readonly string[] }[];
    }
  /** After recovery: the root cause of the deletion itself. */
  | { readonly kind: "fix-argo-ownership"; readonly redFlag: string };
