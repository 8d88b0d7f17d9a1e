/**
 * The finalizers' controllers: one that is not installed (nothing will ever remove its
 * finalizer), what the owner of each finalizer needs (found, healed, made one), the controller's
 * own error for the object — its words are the fix when it runs — and the namespace's own
 * finalizers with who may own them.
 */
import { lookupFinalizer } from "../finalizers.js";
import { ownersOf } from "../owners.js";
import type { Blocker, DiagnosisRemedy, Evidence } from "../types.js";
import { blockerRule, namespaceRule, neverBlocks, noRemedies, refOf } from "./rule.js";

/** The first error a controller said (its Events, its logs), never a finding of ours in AWS. */
export function controllerSaid(b: Pick<Blocker, "evidence">): Evidence | undefined {
  return b.evidence.find((e) => e.error && e.source !== "aws" && e.source !== "cloudtrail");
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

/** A finalizer's controller is not in the cluster; and what each owner needs to finish. */
export const controllerMissing = blockerRule<"controller-missing">({
  kinds: ["controller-missing"],
  needs: ["controllers"],
  stage: "finish",
  order: 0,
  find: (b) => {
    const missing = b.owners.find((o) => o.status === "not-installed");
    return missing
      ? [
          {
            kind: "controller-missing",
            object: refOf(b),
            controller: missing.controller,
            finalizer: missing.finalizer,
          },
        ]
      : [];
  },
  remedies: (b, _links, _f, seen) => {
    const steps: DiagnosisRemedy[] = [];
    for (const owner of b.owners) {
      const key = `${owner.controller}|${owner.finalizer}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const live = owner.candidates.filter((c) => c.kind !== "builtin");
      const info = lookupFinalizer(owner.finalizer);
      if (!owner.known) {
        // Its own log naming the object already confirms the guess (the controller's error says what to fix).
        const confirmed = b.evidence.some(
          (e) =>
            e.error && e.source === "log" && live.some((c) => e.from.startsWith(`${c.namespace}/${c.name}-`)),
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
        for (const c of live.filter((c) => !c.healthy))
          steps.push({
            kind: "heal-controller",
            controller: owner.controller,
            finalizer: owner.finalizer,
            deployment: c,
          });
        if (live.length > 1 && info?.shared !== true)
          steps.push({
            kind: "one-controller",
            controller: owner.controller,
            finalizer: owner.finalizer,
            deployments: live.map((c) => `${c.namespace}/${c.name}`),
          });
      }
    }
    return steps;
  },
});

/** The controller's own error for the object (an Event on it, its log line naming it). */
export const controllerError = blockerRule<"controller-error">({
  kinds: ["controller-error"],
  needs: ["evidence"],
  stage: "finish",
  order: 5,
  find: (b) => {
    const said = controllerSaid(b);
    if (!said) return [];
    const who = reportingController(b, said);
    return [
      {
        kind: "controller-error",
        object: refOf(b),
        from: said.from,
        text: said.text,
        ...(who ? { controller: who.controller, running: who.running, finalizer: who.finalizer } : {}),
      },
    ];
  },
  remedies: (b, links) => {
    const said = links[0];
    if (said === undefined) return [];
    // A running controller that says why it cannot finish: its words are the fix. The Load
    // Balancer Controller's are read further, in AWS (what holds its groups, its targets).
    const reporter =
      said.controller !== undefined && said.finalizer !== undefined && said.running !== undefined
        ? { controller: said.controller, finalizer: said.finalizer, running: said.running }
        : undefined;
    const who =
      reporter !== undefined && lookupFinalizer(reporter.finalizer)?.awsLoadBalancer !== true
        ? reporter
        : undefined;
    const letGo = who !== undefined ? lookupFinalizer(who.finalizer)?.letGo : undefined;
    const steps: DiagnosisRemedy[] = [
      who?.running === true
        ? {
            kind: "fix-controller-error",
            object: refOf(b),
            controller: who.controller,
            finalizer: who.finalizer,
            text: said.text,
            ...(letGo !== undefined ? { letGo } : {}),
          }
        : { kind: "read-controller-error", object: refOf(b), text: said.text },
    ];
    // The generic hint only when the exact dependent is not already named; not for a refusal by
    // IAM: no dependent is involved then.
    if (
      /securityGroup|DependencyViolation/i.test(said.text) &&
      !/UnauthorizedOperation|AccessDenied|not authorized/i.test(said.text) &&
      !b.aws?.blockedGroups.length
    )
      steps.push({ kind: "find-group-dependents" });
    return steps;
  },
});

/** The namespace's own finalizers other than `kubernetes`, each with who may own it. */
export const namespaceFinalizer = namespaceRule<"namespace-finalizer">({
  kinds: ["namespace-finalizer"],
  needs: ["controllers"],
  stage: "finish",
  find: (f) =>
    ownersOf(
      f.namespaceFinalizers.filter((x) => x !== "kubernetes"),
      f.deployments,
      { apiVersion: "v1", kind: "Namespace" },
    ).map((o) => ({
      kind: "namespace-finalizer",
      finalizer: o.finalizer,
      controller: o.controller,
      known: o.known,
      candidates: o.candidates.filter((c) => c.kind !== "builtin").map((c) => `${c.namespace}/${c.name}`),
    })),
  // The verdict and the fix are the namespace's finalizers' as a whole (`namespaceFinalizers`).
  blocks: neverBlocks,
  remedies: noRemedies,
});
