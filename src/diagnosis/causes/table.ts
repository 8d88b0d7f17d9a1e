/**
 * The table of causes, in the order the chain names them: the analysis (`../analyze.ts`) is the
 * fold over it. A new cause is its module (what it needs read, how it is found, whether it blocks,
 * its fixes), one line here, and its words in `src/render/diagnosis-prose.ts`; a test fails when a
 * cause kind has no entry.
 */
import type { Blocker, CauseLink, DiagnosisRemedy } from "../types.js";
import {
  discoveryFailing,
  finalizersRemain,
  forcing,
  contentDeleting,
  contentUnread,
  namespaceFinalizers,
  grantList,
} from "./content.js";
import { controllerError, controllerMissing, namespaceFinalizer } from "./controllers.js";
import { groupMemberFailing, securityGroupHeld, stillUsed, targetsRegistered } from "./load-balancer.js";
import { claimInUse, podsOnLostNode } from "./pods.js";
import { deleteRefused } from "./refusals.js";
import { namespaceRule, type BlockerRule, type CauseKind, type Facts, type NamespaceRule } from "./rule.js";

/** "Never again": doubled Argo CD ownership deleted the namespace; its fix comes after recovery. */
const argoOwnership = namespaceRule<never>({
  kinds: [],
  needs: ["argo"],
  stage: "prevent",
  find: () => [],
  blocks: () => false,
  remedies: (_links, f) => (f.argo?.redFlag ? [{ kind: "fix-argo-ownership", redFlag: f.argo.redFlag }] : []),
});

/** The links of a blocker that has none (most of a big namespace's). */
const NO_LINKS: ReadonlyMap<BlockerRule, readonly CauseLink[]> = new Map();

/**
 * The causes of each blocker as one entry: a blocker's links follow one another in the chain, and
 * its fixes come together, in each rule's `order` (the owner first, then AWS, then what the
 * controller says). `seen` keeps one fix per controller and finalizer across blockers.
 */
function eachBlocker(rules: readonly BlockerRule[]): NamespaceRule {
  const byOrder = [...rules].sort((a, b) => a.order - b.order);
  // Found once per blocker of a diagnosis: its fixes read the links its chain was built from. Most
  // blockers of a big namespace have none, and share one empty entry (80,000 maps were ~15 MB).
  const found = new WeakMap<Facts, WeakMap<Blocker, ReadonlyMap<BlockerRule, readonly CauseLink[]>>>();
  const linksOf = (b: Blocker, f: Facts): ReadonlyMap<BlockerRule, readonly CauseLink[]> => {
    let of = found.get(f);
    if (of === undefined) found.set(f, (of = new WeakMap()));
    let links = of.get(b);
    if (links === undefined) {
      const some = rules.map((r) => [r, r.find(b, f)] as const).filter(([, l]) => l.length > 0);
      of.set(b, (links = some.length > 0 ? new Map(some) : NO_LINKS));
    }
    return links;
  };
  return {
    scope: "namespace",
    kinds: rules.flatMap((r) => r.kinds),
    needs: [...new Set(rules.flatMap((r) => r.needs))],
    stage: "finish",
    find: (f) => {
      const all: CauseLink[] = [];
      for (const b of f.blockers) for (const links of linksOf(b, f).values()) all.push(...links);
      return all;
    },
    blocks: () => false,
    remedies: (_links, f) => {
      const seen = new Set<string>();
      const steps: DiagnosisRemedy[] = [];
      for (const b of f.blockers) {
        const links = linksOf(b, f);
        for (const r of byOrder) steps.push(...r.remedies(b, links.get(r) ?? [], f, seen));
      }
      return steps;
    },
  };
}

const blockerRules = [
  controllerMissing,
  controllerError,
  groupMemberFailing,
  securityGroupHeld,
  stillUsed,
  targetsRegistered,
] as BlockerRule[];

export const causeTable: readonly NamespaceRule[] = [
  discoveryFailing,
  finalizersRemain,
  eachBlocker(blockerRules),
  forcing,
  contentDeleting,
  contentUnread,
  namespaceFinalizers,
  grantList,
  deleteRefused,
  podsOnLostNode,
  claimInUse,
  namespaceFinalizer,
  argoOwnership,
] as NamespaceRule[];

/** The kinds said before any content is read: the namespace is not there, or not being deleted. */
export const presenceKinds = ["namespace-missing", "not-deleting"] as const satisfies readonly CauseKind[];

/** Every cause kind, checked by the compiler against `CauseLink`. */
export const causeKinds = Object.keys({
  "namespace-missing": true,
  "not-deleting": true,
  "discovery-failing": true,
  "finalizers-remain": true,
  "content-deleting": true,
  "content-unread": true,
  "namespace-finalizers": true,
  "controller-missing": true,
  "controller-error": true,
  "security-group-held": true,
  "delete-refused-by-webhook": true,
  "delete-refused": true,
  "pods-on-lost-node": true,
  "claim-in-use": true,
  "namespace-finalizer": true,
  "group-member-failing": true,
} satisfies Record<CauseLink["kind"], true>) as CauseKind[];
