/**
 * `npm run bench -- repoint-plan`: the pure half of `trace ns` + `repoint` at fleet scale — the
 * traffic path and the repair plan chosen on ownership evidence (`tracePaths`, `planRepoint`) over
 * a cluster of 5,000 Ingresses (× scale) in 500 namespaces, each with its ALB, and 200 hostnames
 * whose records name a dead load balancer: half the controller's own name for an owner that is
 * back (a repair), a quarter for an owner that is not (a question), a quarter a name nothing
 * derives (a question). Hostile tenants beside them: look-alike prefixes and claimed rule hosts.
 *
 * Checks: every planned target is tagged for the dead one's true owner and serves the host; every
 * owner that is back gets its repair. Target: ≤ 250 ms for the plan at 1× (one re-plan of the
 * path re-check, which runs on a worker, must not hold it).
 */
import type { LoadBalancerSnapshot, RecordSetSnapshot } from "../src/aws/types.js";
import { tracePaths } from "../src/edge/path.js";
import { planRepoint } from "../src/edge/repoint.js";
import type { ObjectSnapshot } from "../src/kube/types.js";
import { albName } from "../test/sim/lbc/names.js";
import { check, median, type BenchOptions, type BenchResult } from "./common.js";

const CLUSTER = "prod-eks";
const TARGET_MS = 250;

function ms(v: number): string {
  return `${v.toFixed(0)} ms`;
}

interface FleetWorld {
  readonly owners: ObjectSnapshot[];
  readonly loadBalancers: LoadBalancerSnapshot[];
  readonly records: RecordSetSnapshot[];
  readonly hostnames: string[];
  /** hostname → the load balancer name that must be its target (owners that are back). */
  readonly expected: Map<string, string>;
}

function buildFleet(scale: number): FleetWorld {
  const owners: ObjectSnapshot[] = [];
  const loadBalancers: LoadBalancerSnapshot[] = [];
  const records: RecordSetSnapshot[] = [];
  const hostnames: string[] = [];
  const expected = new Map<string, string>();
  const ingresses = 5_000 * scale;
  let id = 1_000_000;
  const ingress = (ns: string, name: string, hosts: string[], dns: string): ObjectSnapshot => ({
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
    loadBalancerHostnames: [dns],
  });
  const lb = (name: string, stack: string): LoadBalancerSnapshot => ({
    arn: `arn:aws:elasticloadbalancing:ap-northeast-2:1:loadbalancer/app/${name}/${String(id)}`,
    name,
    dnsName: `${name}-${String(id++)}.ap-northeast-2.elb.amazonaws.com`,
    state: "active",
    type: "application",
    securityGroups: [],
    tags: { "elbv2.k8s.aws/cluster": CLUSTER, "ingress.k8s.aws/stack": stack },
  });
  const alias = (name: string, target: string): RecordSetSnapshot => ({
    zoneId: "Z1",
    name,
    type: "A",
    values: [],
    alias: { hostedZoneId: "ZWKZPGTI48KDX", dnsName: target, evaluateTargetHealth: true },
  });
  for (let i = 0; i < ingresses; i++) {
    const ns = `team-${String(i % 500)}`;
    const name = `svc-${String(i)}`;
    const host = `h${String(i)}.example.com`;
    const stale = i < 200;
    // The first 200 hostnames are stale; of those, the ones with i % 4 === 2 are not back.
    if (stale && i % 4 === 2) {
      const dead = albName(CLUSTER, { namespace: ns, name }, "internet-facing");
      records.push(alias(host, `${dead}-${String(id++)}.ap-northeast-2.elb.amazonaws.com`));
      hostnames.push(host);
      continue;
    }
    const l = lb(albName(CLUSTER, { namespace: ns, name }, "internet-facing"), `${ns}/${name}`);
    loadBalancers.push(l);
    owners.push(ingress(ns, name, [host], l.dnsName));
    if (!stale) continue;
    hostnames.push(host);
    if (i % 4 === 3) {
      records.push(
        alias(
          host,
          `k8s-${ns.slice(0, 8)}-legacy-${String(i).padStart(10, "0")}-9.ap-northeast-2.elb.amazonaws.com`,
        ),
      );
      continue;
    }
    records.push(alias(host, `${l.name}-${String(id++)}.ap-northeast-2.elb.amazonaws.com`));
    expected.set(host, l.name);
    // A hostile tenant: same readable prefix, claims the host.
    const tns = `${ns}-x`;
    const t = lb(albName(CLUSTER, { namespace: tns, name }, "internet-facing"), `${tns}/${name}`);
    loadBalancers.push(t);
    owners.push(ingress(tns, name, [host], t.dnsName));
  }
  return { owners, loadBalancers, records, hostnames, expected };
}

export async function benchRepointPlan(options: BenchOptions): Promise<BenchResult> {
  const { runs, scale } = options;
  const t0 = performance.now();
  const world = buildFleet(scale);
  const buildMs = performance.now() - t0;
  const times: number[] = [];
  let wrong: string[] = [];
  let missing: string[] = [];
  for (let r = 0; r < runs; r++) {
    const start = performance.now();
    const paths = tracePaths({
      cluster: CLUSTER,
      hostnames: world.hostnames,
      zones: [{ id: "Z1", name: "example.com", private: false }],
      records: world.records,
      distributions: [],
      loadBalancers: world.loadBalancers,
      owners: world.owners,
    });
    const plan = planRepoint({
      paths,
      zones: [{ id: "Z1", name: "example.com", private: false }],
      records: world.records,
      distributions: [],
      loadBalancers: world.loadBalancers,
      owners: world.owners,
      cluster: CLUSTER,
      etags: new Map(),
    });
    times.push(performance.now() - start);
    const planned = new Map(
      (plan.action?.steps ?? []).flatMap((s) =>
        s.kind === "route53"
          ? s.edits.map((e) => [e.name, e.to.split(".")[0]?.replace(/-\d+$/, "") ?? ""])
          : [],
      ),
    );
    wrong = [...planned].filter(([h, t]) => world.expected.get(h) !== t).map(([h, t]) => `${h} → ${t}`);
    missing = [...world.expected.keys()].filter((h) => !planned.has(h));
    // Let the event loop breathe between runs.
    await new Promise((resolve) => setImmediate(resolve));
  }
  const med = median(times);
  return {
    name: "repoint-plan",
    context: [
      `fleet: ${String(world.owners.length)} Ingresses, ${String(world.loadBalancers.length)} ALBs, ${String(world.hostnames.length)} stale hostnames (${String(world.expected.size)} repairable); built in ${ms(buildMs)}`,
    ],
    figures: [
      {
        what: "tracePaths + planRepoint (pure)",
        value: `${ms(med)} median (${times.map((t) => t.toFixed(0)).join(", ")} ms)`,
        target: `≤ ${ms(TARGET_MS * scale)}`,
        met: med <= TARGET_MS * scale,
      },
    ],
    checks: [
      check(
        "repoint-plan: every target is the true owner's",
        wrong.length === 0,
        wrong.length === 0 ? "no target of another owner" : wrong.slice(0, 5).join("; "),
      ),
      check(
        "repoint-plan: every owner that is back gets its repair",
        missing.length === 0,
        missing.length === 0 ? `${String(world.expected.size)} planned` : missing.slice(0, 5).join("; "),
      ),
    ],
  };
}
