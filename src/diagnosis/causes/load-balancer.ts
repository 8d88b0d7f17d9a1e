/**
 * The AWS side of a load balancer controller's finalizer: another member of the IngressGroup the
 * controller's errors name, what stays because live objects use it, the exact network interface
 * or rule that holds a dying security group, and a TargetGroupBinding's registered targets.
 */
import { registeredTargetsLeft, targetSpec } from "../binding.js";
import type { Blocker, DiagnosisRemedy } from "../types.js";
import { blockerRule, refOf, type LinkOf } from "./rule.js";

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

export const groupMemberFailing = blockerRule<"group-member-failing">({
  kinds: ["group-member-failing"],
  needs: ["aws", "evidence"],
  stage: "finish",
  order: 1,
  find: (b) => {
    const culprits = groupCulprits(b);
    return b.aws?.group && culprits.length > 0
      ? [{ kind: "group-member-failing", object: refOf(b), group: b.aws.group.name, culprits }]
      : [];
  },
  remedies: (b, links) =>
    links.map((l) => ({ kind: "fix-group-member", object: refOf(b), group: l.group, culprits: l.culprits })),
});

/** `ELB app/k8s-myapp-worker-01f28dfae5/4f1c…` → `k8s-myapp-worker-01f28dfae5`. */
function elbNameOf(description: string): string | undefined {
  return /^ELB (?:app|net|gwy)\/([^/]+)\//.exec(description)?.[1];
}

/** What of the stack live objects still use: it stays, whatever is forced. */
export const stillUsed = blockerRule<never>({
  kinds: [],
  needs: ["aws"],
  stage: "finish",
  order: 2,
  find: () => [],
  remedies: (b) => {
    const stays = b.aws?.stays ?? [];
    if (stays.length === 0) return [];
    const word = (t: string) =>
      t === "SecurityGroup" ? "security group" : t === "TargetGroup" ? "target group" : "load balancer";
    return [
      {
        kind: "leave-in-place",
        usedBy: [...new Set(stays.flatMap((x) => x.usedBy))],
        resources: stays.map((x) => `${word(x.type)} ${x.name ?? x.id}`),
      },
    ];
  },
});

/** A dying security group the controller cannot delete, and the exact object holding it. */
export const securityGroupHeld = blockerRule<"security-group-held">({
  kinds: ["security-group-held"],
  needs: ["aws"],
  stage: "finish",
  order: 3,
  find: (b) => {
    const out: LinkOf<"security-group-held">[] = [];
    for (const g of b.aws?.blockedGroups ?? []) {
      const firstFailure = [...g.deleteFailures].map((x) => x.time).sort()[0];
      const common = {
        kind: "security-group-held" as const,
        object: refOf(b),
        groupId: g.groupId,
        groupName: g.groupName,
        failures: g.deleteFailures.length,
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
      for (const r of g.referencingRules)
        out.push({
          ...common,
          holder: { type: "rule", id: r.ruleId, groupId: r.groupId, groupName: r.groupName },
        });
    }
    return out;
  },
  // The least destructive fix of each dependent; one a live object needs is left alone.
  remedies: (b) => {
    const steps: DiagnosisRemedy[] = [];
    for (const g of b.aws?.blockedGroups ?? [])
      for (const fix of g.remedies)
        if (fix.kind !== "live-dependent")
          steps.push({
            kind: "release-dependent",
            object: refOf(b),
            groupId: g.groupId,
            groupName: g.groupName,
            fix,
          });
    return steps;
  },
});

/** A TargetGroupBinding's targets still registered: deregistering them lets the controller finish. */
export const targetsRegistered = blockerRule<never>({
  kinds: [],
  needs: ["aws"],
  stage: "finish",
  order: 4,
  find: () => [],
  remedies: (b) => {
    const binding = b.aws?.binding;
    if (binding?.deregisterCommand === undefined || binding.targetGroupArn === undefined) return [];
    return [
      {
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
      },
    ];
  },
});
