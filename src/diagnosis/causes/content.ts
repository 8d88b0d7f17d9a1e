/**
 * The causes read from what is left in the namespace: discovery that fails, objects their
 * finalizers hold, content still being deleted or not readable, the namespace's own finalizers —
 * and the two fixes that follow from them as a whole: forcing one blocker, granting the lists
 * RBAC refuses.
 */
import { lookupFinalizer } from "../finalizers.js";
import type { Blocker, DiagnosisRemedy } from "../types.js";
import { forceAdvisedFor } from "./load-balancer.js";
import { PVC_PROTECTION } from "./pods.js";
import { namespaceRule, neverBlocks, noRemedies, refOf, trueCondition } from "./rule.js";

export const discoveryFailing = namespaceRule<"discovery-failing">({
  kinds: ["discovery-failing"],
  needs: [],
  stage: "finish",
  find: (f) =>
    f.discoveryFailures.length > 0
      ? [{ kind: "discovery-failing", groupVersions: f.discoveryFailures.map((x) => x.groupVersion) }]
      : [],
  // What an aggregated API serves cannot be listed, so the namespace controller cannot finish.
  blocks: (links) => links.length > 0,
  remedies: (_links, f) => {
    const steps: DiagnosisRemedy[] = f.discoveryFailures
      .filter((x) => x.apiService !== undefined)
      .map((failure) => ({ kind: "fix-api-service" as const, failure }));
    const unnamed = f.discoveryFailures.filter((x) => x.apiService === undefined).map((x) => x.groupVersion);
    if (unnamed.length > 0) steps.push({ kind: "check-aggregated-apis", groupVersions: unnamed });
    return steps;
  },
});

export const finalizersRemain = namespaceRule<"finalizers-remain">({
  kinds: ["finalizers-remain"],
  needs: ["controllers"],
  stage: "finish",
  find: (f) =>
    f.blockers.length > 0
      ? [
          {
            kind: "finalizers-remain",
            objects: f.blockers.map((b) => ({ ...refOf(b), finalizers: b.finalizers })),
          },
        ]
      : [],
  blocks: (links, f) =>
    links.length > 0 &&
    (f.slow ||
      f.blockers.some((b) => b.evidence.some((e) => e.error)) ||
      // Only a controller known to be absent makes a finalizer orphaned; `unknown` (it may run as
      // something other than a Deployment) is not proof that nothing will remove it.
      f.blockers.some((b) => b.owners.some((o) => o.status === "not-installed"))),
  // Each blocker's fixes are its own causes' (`eachBlocker`); forcing comes after them all.
  remedies: noRemedies,
});

/** Forcing one blocker's finalizers: the advice only when no fix the operator can apply lets the controller finish. */
export const forcing = namespaceRule<never>({
  kinds: [],
  needs: [],
  stage: "finish",
  find: () => [],
  blocks: neverBlocks,
  remedies: (_links, f, found, verdict) => {
    if (verdict !== "blocked") return [];
    // Forcing a claim's pvc-protection while a pod mounts it is never the advice: its pods are.
    const held = new Set(found.of("claim-in-use").map((c) => c.claim.name));
    const forceable = (b: Blocker): boolean =>
      !(
        b.kind === "PersistentVolumeClaim" &&
        held.has(b.name) &&
        b.finalizers.every((x) => x === PVC_PROTECTION)
      );
    const first = f.blockers.find((b) => forceable(b) && forceAdvisedFor(b));
    return first
      ? [
          {
            kind: "force-finalizer",
            object: refOf(first),
            loadBalancer: first.finalizers.some((x) => lookupFinalizer(x)?.awsLoadBalancer === true),
          },
        ]
      : [];
  },
});

export const contentDeleting = namespaceRule<"content-deleting">({
  kinds: ["content-deleting"],
  needs: [],
  stage: "finish",
  // Content the namespace controller cannot delete is not "being removed": the refusal says why.
  find: (f) =>
    f.blockers.length === 0 &&
    f.remaining.length > 0 &&
    trueCondition(f.ns, "NamespaceDeletionContentFailure") === undefined
      ? [{ kind: "content-deleting", objects: f.remaining.reduce((n, r) => n + r.count, 0) }]
      : [],
  blocks: neverBlocks,
  // Waiting is the step only when nothing deeper (a lost node, a claim) keeps the content.
  remedies: (links, f, found) =>
    links.length > 0 && found.of("pods-on-lost-node").length === 0 && found.of("claim-in-use").length === 0
      ? [{ kind: "wait", namespace: f.ns.name }]
      : [],
});

export const contentUnread = namespaceRule<"content-unread">({
  kinds: ["content-unread"],
  needs: [],
  stage: "finish",
  find: (f) =>
    f.blockers.length === 0 && f.remaining.length === 0 && f.unlisted.length > 0
      ? [{ kind: "content-unread", types: f.unlisted, forbidden: f.forbidden }]
      : [],
  blocks: neverBlocks,
  // What RBAC refuses is granted by `grantList`, whatever else is found.
  remedies: noRemedies,
});

export const namespaceFinalizers = namespaceRule<"namespace-finalizers">({
  kinds: ["namespace-finalizers"],
  needs: [],
  stage: "finish",
  find: (f) =>
    f.blockers.length === 0 &&
    f.remaining.length === 0 &&
    f.unlisted.length === 0 &&
    f.namespaceFinalizers.length > 0
      ? [{ kind: "namespace-finalizers", finalizers: f.namespaceFinalizers }]
      : [],
  blocks: (links, f) => links.length > 0 && f.slow,
  remedies: (links, f) =>
    links.length === 0
      ? []
      : [
          f.namespaceFinalizers.every((x) => x === "kubernetes")
            ? { kind: "namespace-finalizer-builtin" }
            : { kind: "namespace-finalizer-custom", finalizers: f.namespaceFinalizers },
        ],
});

/** What RBAC refuses stays unread however often one asks: say what grants it. */
export const grantList = namespaceRule<never>({
  kinds: [],
  needs: [],
  stage: "finish",
  find: () => [],
  blocks: neverBlocks,
  remedies: (_links, f) => (f.forbidden.length > 0 ? [{ kind: "grant-list", types: f.forbidden }] : []),
});
