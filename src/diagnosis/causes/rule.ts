/**
 * The shape of one cause in the table (`table.ts`): what it needs read, how it is found in the
 * snapshots, whether it blocks the namespace by itself, and its fixes in order. Its words are in
 * `src/render/diagnosis-prose.ts` only. Like the namespace controller's own deleter, the analysis
 * is one fold over the table with one accumulator (`Found`): a cause may read what the causes
 * before it in the table found.
 */
import type { ArgoOwnership } from "../argo.js";
import type {
  DeploymentSnapshot,
  NamespaceSnapshot,
  ObjectSnapshot,
  ResourceType,
} from "../../kube/types.js";
import type { AdmissionWebhookSnapshot, NodeSnapshot, PodPlacementSnapshot } from "../../kube/port.js";
import type {
  Blocker,
  CauseLink,
  DiagnosisRemedy,
  DiscoveryFailureFinding,
  ForbiddenType,
  ObjectRef,
  RemainingResource,
  Verdict,
} from "../types.js";

export type CauseKind = CauseLink["kind"];
export type LinkOf<K extends CauseKind> = Extract<CauseLink, { kind: K }>;

/** What every diagnosis of a Terminating namespace reads once, for whichever cause needs it. */
export type SharedRead =
  /** Deployments that may be a finalizer's controller. */
  | "controllers"
  /** Events on the blockers and their controllers' log lines. */
  | "evidence"
  /** The AWS side of a load balancer controller's finalizer. */
  | "aws"
  /** Argo CD Applications. */
  | "argo";

/** What is read only when a cause asks for it (`causes-collect.ts`). */
export type OnDemandRead =
  /** The admission webhooks a refusal names, their Service and its endpoints. */
  | "webhooks"
  /** The namespace's pods with their node and claims, and the nodes of pods being deleted. */
  | "placements";

/** A cause's need: a shared read, or an on-demand one and when the snapshots call for it. */
export type CauseNeed =
  | SharedRead
  | {
      readonly read: OnDemandRead;
      when(ns: NamespaceSnapshot, listed: readonly ListedType[]): boolean;
    };

/** One namespaced type and what its list returned. */
export interface ListedType {
  readonly type: ResourceType;
  readonly objects: readonly ObjectSnapshot[];
}

/** What the causes' own reads returned (`causes-collect.ts`). */
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

/** The snapshots of a Terminating namespace, as every cause sees them. */
export interface Facts {
  readonly ns: NamespaceSnapshot;
  readonly remaining: readonly RemainingResource[];
  /** Objects being deleted that finalizers hold, with their owners, evidence and AWS side. */
  readonly blockers: readonly Blocker[];
  /** Namespaced types whose list failed: what they hold is unknown. */
  readonly unlisted: readonly string[];
  readonly forbidden: readonly ForbiddenType[];
  readonly discoveryFailures: readonly DiscoveryFailureFinding[];
  /** The namespace's own finalizers, once its content is proven gone (else empty). */
  readonly namespaceFinalizers: readonly string[];
  readonly deployments: readonly DeploymentSnapshot[];
  /** Who in Argo CD manages the namespace, when Argo CD is installed and readable. */
  readonly argo?: ArgoOwnership;
  readonly reads?: CauseReads;
  /** Terminating for longer than the configured limit. */
  readonly slow: boolean;
}

/** The accumulator: what the causes earlier in the table found. */
export interface Found {
  of<K extends CauseKind>(kind: K): readonly LinkOf<K>[];
}

/** When its fixes come: recovery first, then finishing the deletion, then "never again". */
export type Stage = "recover" | "finish" | "prevent";

interface RuleCommon<K extends CauseKind> {
  /** The cause kinds it finds (possibly none: a rule may only add fixes). */
  readonly kinds: readonly K[];
  readonly needs: readonly CauseNeed[];
  readonly stage: Stage;
}

/** A cause of the namespace as a whole. */
export interface NamespaceRule<K extends CauseKind = CauseKind> extends RuleCommon<K> {
  readonly scope: "namespace";
  find(facts: Facts, found: Found): LinkOf<K>[];
  /** Whether what it found makes the namespace BLOCKED by itself. */
  blocks(links: readonly LinkOf<K>[], facts: Facts): boolean;
  /** Its fixes, once every cause is found and the verdict is known. */
  remedies(links: readonly LinkOf<K>[], facts: Facts, found: Found, verdict: Verdict): DiagnosisRemedy[];
}

/**
 * A cause of one blocker. Its links follow the blocker's in the chain; its fixes come in `order`
 * among the blocker's fixes (the owner before AWS, AWS before the controller's words).
 */
export interface BlockerRule<K extends CauseKind = CauseKind> extends RuleCommon<K> {
  readonly scope: "blocker";
  readonly order: number;
  find(blocker: Blocker, facts: Facts): LinkOf<K>[];
  remedies(blocker: Blocker, links: readonly LinkOf<K>[], facts: Facts, seen: Set<string>): DiagnosisRemedy[];
}

export type CauseRule = NamespaceRule | BlockerRule;

/** Declares a rule with its kinds checked against what it finds (the table holds them untyped). */
export function namespaceRule<K extends CauseKind>(rule: Omit<NamespaceRule<K>, "scope">): CauseRule {
  return { scope: "namespace", ...rule } as unknown as CauseRule;
}

export function blockerRule<K extends CauseKind>(rule: Omit<BlockerRule<K>, "scope">): CauseRule {
  return { scope: "blocker", ...rule } as unknown as CauseRule;
}

/** The condition's message while it is True. */
export function trueCondition(ns: NamespaceSnapshot, type: string): string | undefined {
  const c = ns.conditions.find((x) => x.type === type);
  return c?.status === "True" ? (c.message ?? "") : undefined;
}

/** `blocks` for a cause that never decides the verdict by itself. */
export const neverBlocks = (): boolean => false;
/** `remedies` for a cause whose fix another cause gives. */
export const noRemedies = (): DiagnosisRemedy[] => [];

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
