/**
 * Property: over generated worlds with hostile tenants — look-alike names in other namespaces (the
 * same `k8s-<ns:8>-<name:8>-` prefix), rule hosts claimed by others, a tenant that chose the dead
 * load balancer's very name by annotation, several load balancers of one owner, an owner not back
 * yet — the repair plan's target for a stale link is always a load balancer the controller tagged
 * for the dead one's true owner, whose live rules serve the hostname; otherwise there is no plan.
 * And when the truth is plain (the owner is back with one load balancer that serves the host, the
 * dead name is the controller's own), the repair is found.
 *
 * The generator knows the truth; names come from the simulator's independent copy of the
 * controller's naming (test/sim/lbc/names.ts), never from the product.
 */
import { describe, expect, it } from "vitest";
import type { LoadBalancerSnapshot, RecordSetSnapshot } from "../../../src/aws/types.js";
import { tracePaths, type TraceInput } from "../../../src/edge/path.js";
import { planRepoint } from "../../../src/edge/repoint.js";
import type { ObjectSnapshot } from "../../../src/kube/types.js";
import { mulberry32 as rng } from "../../security/hostile.js";
import { albName } from "../../sim/lbc/names.js";

const CLUSTER = "prod-eks";
const HOST = "api.example.com";

interface Generated {
  readonly input: TraceInput;
  /** The stack the dead load balancer really belonged to. */
  readonly trueStack: string;
  /** The owner's live load balancers that serve HOST (the only acceptable targets). */
  readonly acceptable: ReadonlySet<string>;
  /** The truth is plain: exactly one acceptable target and the dead name is the controller's own. */
  readonly plain: boolean;
}

function ingress(
  ns: string,
  name: string,
  hosts: readonly string[],
  lbDns: string | undefined,
  extra: Partial<ObjectSnapshot> = {},
): ObjectSnapshot {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    resource: "ingresses",
    namespace: ns,
    name,
    finalizers: ["ingress.k8s.aws/resources"],
    labels: {},
    annotations: { "alb.ingress.kubernetes.io/scheme": "internet-facing" },
    ownerReferences: [],
    ruleHosts: hosts,
    ...(lbDns !== undefined ? { loadBalancerHostnames: [lbDns] } : {}),
    ...extra,
  };
}

function lb(name: string, id: number, stack: string | undefined): LoadBalancerSnapshot {
  return {
    arn: `arn:aws:elasticloadbalancing:ap-northeast-2:1:loadbalancer/app/${name}/${String(id)}`,
    name,
    dnsName: `${name}-${String(id)}.ap-northeast-2.elb.amazonaws.com`,
    state: "active",
    type: "application",
    securityGroups: [],
    tags: stack !== undefined ? { "elbv2.k8s.aws/cluster": CLUSTER, "ingress.k8s.aws/stack": stack } : {},
  };
}

function generate(seed: number): Generated {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  let id = 1000;
  const owners: ObjectSnapshot[] = [];
  const lbs: LoadBalancerSnapshot[] = [];
  const ns = pick(["payments", "shop", "myapp"]);
  const name = pick(["api-ingress", "web", "frontend-main"]);
  const trueStack = `${ns}/${name}`;
  const derived = albName(CLUSTER, { namespace: ns, name }, "internet-facing");
  // The dead load balancer: the controller's own name for the owner, or a name nothing derives.
  const derivedDead = r() < 0.7;
  const deadName = derivedDead
    ? derived
    : `k8s-${ns.slice(0, 8)}-legacy-${((seed % 9000000000) + 1000000000).toString(16).slice(0, 10).padStart(10, "0")}`;
  const deadDns = `${deadName}-${String(id++)}.ap-northeast-2.elb.amazonaws.com`;

  const acceptable = new Set<string>();
  const ownerBack = r() < 0.7;
  const ownerServes = r() < 0.75;
  const ownerLbs = ownerBack ? (r() < 0.85 ? 1 : 2) : 0;
  if (ownerBack) {
    const mine: LoadBalancerSnapshot[] = [];
    for (let i = 0; i < ownerLbs; i++)
      mine.push(lb(i === 0 ? derived : `${derived.slice(0, -4)}beef`, id++, trueStack));
    lbs.push(...mine);
    owners.push(
      ingress(ns, name, ownerServes ? [HOST, "other.example.com"] : ["other.example.com"], mine[0]?.dnsName),
    );
    if (ownerServes) for (const l of mine) acceptable.add(l.name);
  }

  // Hostile tenants.
  const tenants = Math.floor(r() * 4);
  for (let t = 0; t < tenants; t++) {
    const kind = pick(["lookalike", "claimer", "chosen-name", "catch-all"] as const);
    const tns = kind === "lookalike" ? `${ns}-dev` : pick(["sandbox", "team-x", `${ns}2`]);
    const tname = kind === "lookalike" ? `${name}-x` : `t${String(t)}`;
    const tStack = `${tns}/${tname}`;
    const tlbName =
      kind === "chosen-name"
        ? deadName
        : albName(CLUSTER, { namespace: tns, name: tname }, "internet-facing");
    if (lbs.some((l) => l.name === tlbName)) continue;
    const tlb = lb(tlbName, id++, tStack);
    lbs.push(tlb);
    owners.push(
      ingress(tns, tname, kind === "claimer" || kind === "chosen-name" ? [HOST] : [], tlb.dnsName, {
        ...(kind === "catch-all" ? { servesAnyHost: true } : {}),
        ...(kind === "chosen-name"
          ? {
              annotations: {
                "alb.ingress.kubernetes.io/scheme": "internet-facing",
                "alb.ingress.kubernetes.io/load-balancer-name": deadName,
              },
            }
          : {}),
      }),
    );
  }
  // Unowned load balancers of the account with look-alike names.
  if (r() < 0.5) lbs.push(lb(`${derived.slice(0, -10)}0000000000`, id++, undefined));

  const records: RecordSetSnapshot[] = [
    {
      zoneId: "Z1",
      name: HOST,
      type: "A",
      values: [],
      alias: { hostedZoneId: "ZWKZPGTI48KDX", dnsName: deadDns, evaluateTargetHealth: true },
    },
  ];
  const chosenByTenant = owners.some(
    (o) => o.annotations["alb.ingress.kubernetes.io/load-balancer-name"] === deadName,
  );
  return {
    input: {
      cluster: CLUSTER,
      hostnames: [HOST],
      zones: [{ id: "Z1", name: "example.com", private: false }],
      records,
      distributions: [],
      loadBalancers: lbs,
      owners,
    },
    trueStack,
    acceptable,
    plain: derivedDead && acceptable.size === 1 && !chosenByTenant,
  };
}

describe("repoint targets on ownership evidence (property)", () => {
  it("over 600 generated worlds: the target is the true owner's and serves the host, or there is no plan", () => {
    let planned = 0;
    let refused = 0;
    for (let seed = 1; seed <= 600; seed++) {
      const g = generate(seed);
      const paths = tracePaths(g.input);
      const plan = planRepoint({
        paths,
        zones: g.input.zones,
        records: g.input.records,
        distributions: [],
        loadBalancers: g.input.loadBalancers,
        owners: g.input.owners,
        cluster: CLUSTER,
        etags: new Map(),
      });
      const targets = plan.action?.targets ?? [];
      for (const t of targets) {
        const target = g.input.loadBalancers.find((l) => l.name === t.loadBalancer);
        expect(target?.tags["ingress.k8s.aws/stack"], `seed ${String(seed)}`).toBe(g.trueStack);
        expect(g.acceptable.has(t.loadBalancer), `seed ${String(seed)}`).toBe(true);
      }
      const steps = plan.action?.steps ?? [];
      for (const s of steps) {
        if (s.kind !== "route53") continue;
        for (const e of s.edits) {
          const name = e.to.split(".")[0]?.replace(/-\d+$/, "") ?? "";
          expect(g.acceptable.has(name), `seed ${String(seed)}: ${e.to}`).toBe(true);
        }
      }
      if (g.plain) {
        expect(plan.action, `seed ${String(seed)}: the plain truth is found`).toBeDefined();
        planned++;
      } else if (plan.action === undefined) refused++;
    }
    // The generator reaches both sides of the property.
    expect(planned).toBeGreaterThan(50);
    expect(refused).toBeGreaterThan(50);
  });
});
