import { describe, expect, it } from "vitest";
import type {
  DistributionSnapshot,
  LoadBalancerSnapshot,
  RecordSetSnapshot,
} from "../../../src/aws/types.js";
import { lbcLoadBalancerName } from "../../../src/edge/lbc-names.js";
import { aliasMatches, tracePaths, type TraceInput } from "../../../src/edge/path.js";
import type { ObjectSnapshot } from "../../../src/kube/types.js";

const zone = { id: "Z1", name: "example.com", private: false };
const lb = (name: string, dns: string, stack?: string): LoadBalancerSnapshot => ({
  arn: `arn:aws:elasticloadbalancing:ap-northeast-2:1:loadbalancer/app/${name}/1`,
  name,
  dnsName: dns,
  state: "active",
  type: "application",
  securityGroups: [],
  tags: stack ? { "elbv2.k8s.aws/cluster": "prod-eks", "ingress.k8s.aws/stack": stack } : {},
});
const ing = (ns: string, name: string, host: string): ObjectSnapshot => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  resource: "ingresses",
  namespace: ns,
  name,
  finalizers: ["ingress.k8s.aws/resources"],
  labels: {},
  annotations: {},
  ownerReferences: [],
  loadBalancerHostnames: [host],
  ruleHosts: ["shop.example.com"],
});
const alias = (name: string, target: string, extra: Partial<RecordSetSnapshot> = {}): RecordSetSnapshot => ({
  zoneId: "Z1",
  name,
  type: "A",
  values: [],
  alias: { hostedZoneId: "ZWKZPGTI48KDX", dnsName: target, evaluateTargetHealth: true },
  ...extra,
});
const OLD = "k8s-shop-web-aaaaaaaaaa-111.ap-northeast-2.elb.amazonaws.com";
const NEW = "k8s-shop-web-aaaaaaaaaa-222.ap-northeast-2.elb.amazonaws.com";
const base = (over: Partial<TraceInput>): TraceInput => ({
  hostnames: ["shop.example.com"],
  zones: [zone],
  records: [],
  distributions: [],
  loadBalancers: [],
  owners: [],
  ...over,
});

describe("tracePaths", () => {
  it("normalises dualstack, case and the trailing dot; ok through to the owning Ingress", () => {
    const [p] = tracePaths(
      base({
        records: [alias("shop.example.com", `dualstack.${NEW.toUpperCase()}.`)],
        loadBalancers: [lb("k8s-shop-web-aaaaaaaaaa", NEW, "shop/web")],
        owners: [ing("shop", "web", NEW)],
      }),
    );
    expect(p?.verdict).toBe("ok");
    expect(p?.hops.map((h) => h.kind)).toEqual(["record", "load-balancer", "owner"]);
    expect(p?.hops[2]?.label).toBe("Ingress shop/web");
  });

  it("a re-created load balancer of the same name replaces a stale alias", () => {
    const [p] = tracePaths(
      base({
        records: [alias("shop.example.com", OLD)],
        loadBalancers: [lb("k8s-shop-web-aaaaaaaaaa", NEW, "shop/web")],
        owners: [ing("shop", "web", NEW)],
      }),
    );
    expect(p?.verdict).toBe("stale");
    const stale = p?.hops.find((h) => h.kind === "load-balancer");
    expect(stale?.replacement).toMatchObject({
      dnsName: NEW,
      loadBalancer: "k8s-shop-web-aaaaaaaaaa",
      owner: "Ingress shop/web",
      namespaces: ["shop"],
      cluster: "prod-eks",
      serves: ["shop.example.com"],
    });
    expect(stale?.replacement?.evidence).toMatch(
      /exists again and is Ingress shop\/web's \(Ingress shop\/web's status names it\)/,
    );
    expect(stale?.replacement?.evidence).not.toMatch(/tagged/);
  });

  it("a tenant's load balancer tagged for another team's stack is never its replacement", () => {
    // The victim's Ingress still names its old, deleted load balancer; a tenant with ELB rights
    // tagged its own ALB for the victim's stack (the cluster's tags) and gave it a rule for the host.
    const [p] = tracePaths(
      base({
        cluster: "prod-eks",
        records: [alias("shop.example.com", OLD)],
        loadBalancers: [
          lb(
            "k8s-tenant-evil-cccccccccc",
            "k8s-tenant-evil-cccccccccc-7.ap-northeast-2.elb.amazonaws.com",
            "shop/web",
          ),
        ],
        owners: [ing("shop", "web", OLD)],
      }),
    );
    const stale = p?.hops.find((h) => h.kind === "load-balancer");
    expect(stale?.verdict).toBe("stale");
    expect(stale?.replacement).toBeUndefined();
    expect(stale?.candidates ?? []).toHaveLength(0);
    expect(stale?.unresolved).toMatch(/has no load balancer now/);
  });

  it("an Ingress whose group.name the controller refuses joins no stack and owns nothing", () => {
    const tenant: ObjectSnapshot = {
      ...ing("tenant", "x", "k8s-tenant-x-dddddddddd-8.ap-northeast-2.elb.amazonaws.com"),
      // Contains "/": not a group name the controller accepts, though it equals shop/web's stack value.
      annotations: { "alb.ingress.kubernetes.io/group.name": "shop/web" },
    };
    const [p] = tracePaths(
      base({
        cluster: "prod-eks",
        records: [alias("shop.example.com", OLD)],
        loadBalancers: [
          lb(
            "k8s-tenant-x-dddddddddd",
            "k8s-tenant-x-dddddddddd-8.ap-northeast-2.elb.amazonaws.com",
            "shop/web",
          ),
        ],
        owners: [ing("shop", "web", OLD), tenant],
      }),
    );
    const stale = p?.hops.find((h) => h.kind === "load-balancer");
    expect(stale?.replacement).toBeUndefined();
    expect(stale?.oldOwner?.namespaces).toEqual(["shop"]);
  });

  it("mismatched: the load balancer exists but its Ingress now uses another", () => {
    // The old one is the stack's other-scheme load balancer: its exact derived name establishes it.
    const name = lbcLoadBalancerName("prod-eks", {
      stack: "shop/web",
      explicitGroup: false,
      scheme: "internet-facing",
    });
    const other = `${name}-333.ap-northeast-2.elb.amazonaws.com`;
    const [p] = tracePaths(
      base({
        cluster: "prod-eks",
        records: [alias("shop.example.com", other)],
        loadBalancers: [lb(name, other, "shop/web"), lb("k8s-shop-web-aaaaaaaaaa", NEW, "shop/web")],
        owners: [ing("shop", "web", NEW)],
      }),
    );
    expect(p?.verdict).toBe("mismatched");
    expect(p?.hops.find((h) => h.kind === "load-balancer")?.replacement?.dnsName).toBe(NEW);
    expect(p?.hops[0]?.replacement?.dnsName).toBe(NEW);
  });

  it("two load balancers of the established owner serve the host: offered, none chosen", () => {
    const gone = "k8s-shop-web-aaaaaaaaaa-9.ap-northeast-2.elb.amazonaws.com";
    const [p] = tracePaths(
      base({
        records: [alias("shop.example.com", gone)],
        cluster: "prod-eks",
        // Both of the stack's derived names (one per scheme): each established as the stack's.
        loadBalancers: (["internal", "internet-facing"] as const).map((scheme) => {
          const name = lbcLoadBalancerName("prod-eks", { stack: "shop/web", explicitGroup: false, scheme });
          return lb(name, `${name}-5.ap-northeast-2.elb.amazonaws.com`, "shop/web");
        }),
        owners: [{ ...ing("shop", "web", gone), deletionTimestamp: "2026-01-01T00:00:00Z" }],
      }),
    );
    const stale = p?.hops.find((h) => h.verdict === "stale");
    expect(stale?.replacement).toBeUndefined();
    // The deleting owner's rules are not a live owner's: neither serves the host yet.
    expect(stale?.unresolved).toMatch(/do not serve shop\.example\.com/);
  });

  it("load balancers of other namespaces with a look-alike prefix are never candidates", () => {
    const [p] = tracePaths(
      base({
        records: [alias("shop.example.com", "k8s-shop-gone-cccccccccc-9.ap-northeast-2.elb.amazonaws.com")],
        loadBalancers: [
          lb(
            "k8s-shop-gone-dddddddddd",
            "k8s-shop-gone-dddddddddd-5.ap-northeast-2.elb.amazonaws.com",
            "shop-dev/gone-x",
          ),
        ],
        owners: [ing("shop-dev", "gone-x", "k8s-shop-gone-dddddddddd-5.ap-northeast-2.elb.amazonaws.com")],
      }),
    );
    const stale = p?.hops.find((h) => h.verdict === "stale");
    expect(stale?.replacement).toBeUndefined();
    expect(stale?.candidates).toBeUndefined();
    expect(stale?.unresolved).toMatch(/cannot be established/);
  });

  it("marks ExternalDNS-owned records, shows weighted sets, follows wildcard aliases and origin groups", () => {
    const dist: DistributionSnapshot = {
      id: "E1",
      domainName: "d1.cloudfront.net",
      status: "Deployed",
      enabled: true,
      aliases: ["*.example.com"],
      origins: [
        { id: "primary", domainName: NEW },
        { id: "fallback", domainName: OLD },
      ],
      originGroups: [{ id: "group", members: ["primary", "fallback"] }],
      defaultTarget: "group",
      behaviors: [{ pathPattern: "/api/*", target: "primary" }],
    };
    const [p] = tracePaths(
      base({
        records: [
          alias("shop.example.com", "d1.cloudfront.net", { setIdentifier: "blue", weight: 90 }),
          {
            zoneId: "Z1",
            name: "shop.example.com",
            type: "TXT",
            values: ['"heritage=external-dns,external-dns/owner=prod"'],
          },
        ],
        distributions: [dist],
        loadBalancers: [lb("k8s-shop-web-aaaaaaaaaa", NEW, "shop/web")],
        owners: [ing("shop", "web", NEW)],
      }),
    );
    const record = p?.hops[0];
    expect(record?.externalDns).toBe(true);
    expect(record?.label).toContain("[weight 90 blue]");
    const origins = p?.hops.filter((h) => h.kind === "origin") ?? [];
    expect(origins.map((o) => o.label)).toEqual([
      expect.stringContaining("(default behaviour, /api/*)"),
      expect.stringContaining("(default behaviour)"),
    ]);
    expect(origins[1]?.verdict).toBe("stale");
    expect(p?.verdict).toBe("stale");
    expect(aliasMatches("*.example.com", "shop.example.com")).toBe(true);
    expect(aliasMatches("*.example.com", "a.b.example.com")).toBe(false);
  });

  it("a name no zone serves is unknown, never ok", () => {
    const [p] = tracePaths(base({ hostnames: ["www.other.org"] }));
    expect(p?.verdict).toBe("unknown");
  });
});
