/**
 * Repairs chosen on ownership evidence, on the seed world after the forced removal, with hostile
 * tenants beside it: a namespace whose name sanitises to the same 8 characters (`my-app` → `myapp`)
 * and an Ingress `myapp-worker-ingress-x`, so the simulated controller gives it an ALB with the same
 * `k8s-myapp-myappwor-` prefix as the worker's; and an Ingress in `sandbox` that claims
 * test.example.com and worker.example.com as rule hosts. The names come from the simulated
 * controller (its own naming code), not from the product.
 *
 * While the worker is not back, nothing is planned and no tenant is offered. Once it is back, the
 * repair goes to the worker's ALB and nowhere else; `--to` onto either tenant is refused with the
 * reason, and only `--other-namespace` lets it through, the risk then first on the request.
 */
import { execFile } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { createAwsAdapter } from "../../../src/aws/sdk-adapter.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import { planPathRepair } from "../../../src/traffic/repoint.js";
import { seedIngress } from "../../sim/argo-sync.js";
import type { KubeObject } from "../../sim/kube/index.js";
import { eventually } from "../../helpers/eventually.js";
import type { World } from "../../sim/world.js";
import { openAwsWorld, recoverSeed, type AwsWorld } from "../helpers/aws-world.js";

let opened: AwsWorld | undefined;

/** The real `aws` CLI against the world's AWS simulator: the judge of what the simulator answers. */
function awsCli(w: World, args: readonly string[]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    execFile(
      "aws",
      [...args, "--endpoint-url", w.aws.url, "--region", "ap-northeast-2", "--output", "json"],
      { env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...w.aws.env() } },
      (err, stdout, stderr) =>
        err ? reject(new Error(`aws ${args.join(" ")}: ${stderr}`)) : resolve(JSON.parse(stdout)),
    );
  });
}
afterEach(async () => {
  await opened?.close();
  opened = undefined;
});

function tenantIngress(namespace: string, name: string, hosts: readonly string[]): KubeObject {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: {
      name,
      namespace,
      annotations: { "alb.ingress.kubernetes.io/scheme": "internet-facing" },
    },
    spec: {
      ingressClassName: "alb",
      rules: hosts.map((host) => ({
        host,
        http: {
          paths: [{ path: "/", pathType: "Prefix", backend: { service: { name, port: { number: 80 } } } }],
        },
      })),
    },
  };
}

/** The load balancer name the controller wrote into an Ingress's status, once it has one. */
async function provisioned(w: World, namespace: string, name: string): Promise<string> {
  return eventually(
    () => {
      const o = w.kube.store.get("networking.k8s.io/v1", "Ingress", namespace, name) as
        { status?: { loadBalancer?: { ingress?: { hostname?: string }[] } } } | undefined;
      const host = o?.status?.loadBalancer?.ingress?.[0]?.hostname;
      // `[internal-]<name>-<digits>.<region>.elb.amazonaws.com` → `<name>`.
      return host === undefined ? undefined : (host.split(".")[0] ?? "").replace(/^internal-|-\d+$/g, "");
    },
    20_000,
    `the controller provisioning ${namespace}/${name}`,
  );
}

async function hostileWorld(): Promise<{
  w: World;
  aws: ReturnType<typeof createAwsAdapter>;
  lookalike: string;
  claimer: string;
}> {
  opened = await openAwsWorld("seed-incident.yaml");
  const { w, c } = opened;
  await recoverSeed(w, []);
  for (const ns of ["my-app", "sandbox"])
    w.kube.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  w.kube.store.create(tenantIngress("my-app", "myapp-worker-ingress-x", ["lookalike.example.org"]));
  w.kube.store.create(tenantIngress("sandbox", "claim", ["test.example.com", "worker.example.com"]));
  const lookalike = await provisioned(w, "my-app", "myapp-worker-ingress-x");
  const claimer = await provisioned(w, "sandbox", "claim");
  return { w, aws: createAwsAdapter(c), lookalike, claimer };
}

describe("repairs on ownership evidence, with hostile tenants", () => {
  it("the simulated controller writes each Ingress rule host as a host-header condition; the default rule answers 404", async () => {
    const { w, claimer } = await hostileWorld();
    const lbs = (await awsCli(w, ["elbv2", "describe-load-balancers", "--names", claimer])) as {
      LoadBalancers: { LoadBalancerArn: string }[];
    };
    const arn = lbs.LoadBalancers[0]?.LoadBalancerArn ?? "";
    const listeners = (await awsCli(w, ["elbv2", "describe-listeners", "--load-balancer-arn", arn])) as {
      Listeners: { ListenerArn: string }[];
    };
    const rules = (await awsCli(w, [
      "elbv2",
      "describe-rules",
      "--listener-arn",
      listeners.Listeners[0]?.ListenerArn ?? "",
    ])) as {
      Rules: {
        IsDefault: boolean;
        Conditions: { Field: string; HostHeaderConfig?: { Values: string[] } }[];
        Actions: { Type: string; FixedResponseConfig?: { StatusCode: string } }[];
      }[];
    };
    const hosts = rules.Rules.flatMap((r) =>
      r.Conditions.filter((c) => c.Field === "host-header").flatMap((c) => c.HostHeaderConfig?.Values ?? []),
    );
    expect(hosts.sort()).toEqual(["test.example.com", "worker.example.com"]);
    const dflt = rules.Rules.find((r) => r.IsDefault);
    expect(dflt?.Actions[0]?.FixedResponseConfig?.StatusCode).toBe("404");
  });

  it("a look-alike prefix and a claimed rule host never become a target; --to onto them is refused with the reason", async () => {
    const { w, aws, lookalike, claimer } = await hostileWorld();
    // The look-alike shares the worker's readable prefix: exactly what a prefix match would take.
    expect(lookalike.startsWith("k8s-myapp-myappwor-")).toBe(true);
    const kube = createKubeAdapter(w.kube.kubeconfig());
    const now = (): Date => new Date();

    // The worker is not back: nothing to plan, and neither tenant is offered.
    const before = await planPathRepair(aws, kube, { namespace: "myapp" }, now);
    expect(before.plan.action).toBeUndefined();
    const asked = before.plan.questions.join("\n");
    expect(asked).not.toContain(lookalike);
    expect(asked).not.toContain(claimer);
    expect(asked).not.toMatch(/candidate/);
    const host = await planPathRepair(aws, kube, { hostnames: ["test.example.com"] }, now);
    expect(host.plan.action).toBeUndefined();
    expect(JSON.stringify(host)).not.toContain(claimer);

    // The worker is back (Argo CD re-sync): its ALB, and only it, is the repair.
    w.kube.store.create(seedIngress("myapp-worker-ingress"));
    const worker = await provisioned(w, "myapp", "myapp-worker-ingress");
    const after = await planPathRepair(
      aws,
      kube,
      { hostnames: ["test.example.com", "worker.example.com"] },
      now,
    );
    const action = after.plan.action;
    expect(action?.targets?.map((t) => t.loadBalancer)).toEqual([worker]);
    expect(action?.targets?.[0]).toMatchObject({
      owner: "Ingress myapp/myapp-worker-ingress",
      namespaces: ["myapp"],
      cluster: "prod-eks",
    });
    expect(JSON.stringify(action)).not.toContain(lookalike);
    expect(JSON.stringify(action)).not.toContain(claimer);

    // --to the look-alike: it serves none of the hostname (its rules would answer 404).
    const ontoLookalike = await planPathRepair(aws, kube, { hostnames: ["test.example.com"] }, now, {
      choose: lookalike,
    });
    expect(ontoLookalike.plan.action).toBeUndefined();
    expect(ontoLookalike.plan.refused[0]).toMatch(
      new RegExp(`--to ${lookalike} is refused for test\\.example\\.com: .*lookalike\\.example\\.org.*404`),
    );

    // --to the claimer: it serves the host, but it is sandbox's, not myapp's (the old origin's owner).
    const ontoClaimer = await planPathRepair(aws, kube, { hostnames: ["test.example.com"] }, now, {
      choose: claimer,
    });
    expect(ontoClaimer.plan.action).toBeUndefined();
    expect(ontoClaimer.plan.refused[0]).toMatch(
      /Ingress sandbox\/claim \(namespace sandbox\), not to namespace myapp/,
    );
    expect(ontoClaimer.plan.refused[0]).toMatch(/--other-namespace/);

    // Said explicitly: planned, with the move to another namespace as the first risk.
    const explicit = await planPathRepair(aws, kube, { hostnames: ["test.example.com"] }, now, {
      choose: claimer,
      allowOtherNamespace: true,
    });
    expect(explicit.plan.action?.targets?.[0]).toMatchObject({
      loadBalancer: claimer,
      owner: "Ingress sandbox/claim",
      namespaces: ["sandbox"],
    });
    expect(explicit.plan.action?.risks?.[0]).toMatch(
      /test\.example\.com moves to Ingress sandbox\/claim \(namespace sandbox\) — another namespace than Ingress myapp\/myapp-worker-ingress/,
    );

    // The owner's rules say the worker serves test.example.com, but its listener rules in AWS do
    // not route it yet (the controller has not applied them): the plan is refused, it would 404.
    await w.lbc?.stop();
    const workerLb = [...w.aws.world.loadBalancers.values()].find((l) => l.name === worker);
    const listener = [...w.aws.world.listeners.values()].find((l) => l.loadBalancerArn === workerLb?.arn);
    if (!listener) throw new Error("the worker ALB's listener");
    w.aws.world.setListenerRules(
      listener.arn,
      listener.rules
        .filter((r) => !(r.hostHeaders ?? []).includes("test.example.com"))
        .map((r) => ({
          priority: r.priority,
          pathPatterns: r.pathPatterns,
          ...(r.hostHeaders ? { hostHeaders: r.hostHeaders } : {}),
          targetGroupArns: r.targetGroupArns,
        })),
    );
    const unrouted = await planPathRepair(aws, kube, { hostnames: ["test.example.com"] }, now);
    expect(unrouted.plan.action).toBeUndefined();
    expect(unrouted.plan.refused[0]).toMatch(
      new RegExp(`${worker}'s listener rules in AWS do not route test\\.example\\.com .*answer 404`),
    );
    // Routed again: planned, the evidence saying what AWS routes.
    w.aws.world.setListenerRules(
      listener.arn,
      listener.rules.map((r) => ({
        priority: r.priority,
        pathPatterns: r.pathPatterns,
        hostHeaders: ["test.example.com"],
        targetGroupArns: r.targetGroupArns,
      })),
    );
    const routed = await planPathRepair(aws, kube, { hostnames: ["test.example.com"] }, now);
    expect(routed.plan.action?.targets?.[0]?.established).toMatch(
      /its listener rules in AWS route test\.example\.com$/,
    );
  });
});
