/**
 * The repair plan on worlds built in memory (pure): the exact DELETE/CREATE a stale alias needs (the
 * `dualstack.` form kept, the new load balancer's zone), an origin inside an origin group, a record
 * ExternalDNS owns (left to it), a record that was not read (no guess), an ETag that could not be read.
 */
import { describe, expect, it } from "vitest";
import type {
  DistributionSnapshot,
  LoadBalancerSnapshot,
  RecordSetSnapshot,
} from "../../../src/aws/types.js";
import { tracePaths, type TraceInput } from "../../../src/edge/path.js";
import { planRepoint } from "../../../src/edge/repoint.js";
import type { ObjectSnapshot } from "../../../src/kube/types.js";

const zone = { id: "Z1", name: "example.com", private: false };
// The name cluster "prod"'s controller derives for Ingress shop/web (internet-facing): the evidence
// that the dead load balancer was shop/web's (computed by the simulator's independent naming code).
const OLD = "k8s-shop-web-0c9cb52896-111.ap-northeast-2.elb.amazonaws.com";
const NEW = "k8s-shop-web-bbbbbbbbbb-222.ap-northeast-2.elb.amazonaws.com";
const lbNew: LoadBalancerSnapshot = {
  arn: "arn:aws:elasticloadbalancing:ap-northeast-2:1:loadbalancer/app/k8s-shop-web-bbbbbbbbbb/2",
  name: "k8s-shop-web-bbbbbbbbbb",
  dnsName: NEW,
  canonicalHostedZoneId: "ZNEWZONE",
  state: "active",
  type: "application",
  securityGroups: [],
  tags: { "elbv2.k8s.aws/cluster": "prod", "ingress.k8s.aws/stack": "shop/web" },
};
const owner: ObjectSnapshot = {
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  resource: "ingresses",
  namespace: "shop",
  name: "web",
  finalizers: [],
  labels: {},
  annotations: {},
  ownerReferences: [],
  loadBalancerHostnames: [NEW],
  ruleHosts: ["shop.example.com"],
};
const alias = (name: string, target: string): RecordSetSnapshot => ({
  zoneId: "Z1",
  name,
  type: "A",
  values: [],
  alias: { hostedZoneId: "ZOLDZONE", dnsName: target, evaluateTargetHealth: true },
});

function plan(input: Partial<TraceInput> & { etags?: Map<string, string> }) {
  const traceInput: TraceInput = {
    cluster: "prod",
    hostnames: ["shop.example.com"],
    zones: [zone],
    records: [],
    distributions: [],
    loadBalancers: [lbNew],
    owners: [owner],
    ...input,
  };
  return planRepoint({
    paths: tracePaths(traceInput),
    zones: traceInput.zones,
    records: traceInput.records,
    distributions: traceInput.distributions,
    loadBalancers: traceInput.loadBalancers,
    owners: traceInput.owners,
    cluster: "prod",
    etags: input.etags ?? new Map(),
  });
}

describe("planRepoint", () => {
  it("a stale alias: DELETE exactly as read, CREATE naming the new ALB in its zone, dualstack kept", () => {
    const old = alias("shop.example.com", `dualstack.${OLD}.`);
    const p = plan({ records: [old] });
    const step = p.action?.steps[0];
    if (step?.kind !== "route53") throw new Error("expected a Route 53 step");
    expect(step.changes[0]).toEqual({ action: "DELETE", record: old });
    expect(step.changes[1]?.action).toBe("CREATE");
    expect(step.changes[1]?.record.alias).toEqual({
      hostedZoneId: "ZNEWZONE",
      dnsName: `dualstack.${NEW}`,
      evaluateTargetHealth: true,
    });
    expect(p.action?.hostnames).toEqual(["shop.example.com"]);
  });

  it("an origin inside an origin group is changed in place, bound to the ETag read when planning", () => {
    const d: DistributionSnapshot = {
      id: "EDIST",
      domainName: "d111.cloudfront.net",
      status: "Deployed",
      enabled: true,
      aliases: ["shop.example.com"],
      origins: [
        { id: "primary", domainName: OLD },
        { id: "fallback", domainName: "static.example.net" },
      ],
      originGroups: [{ id: "group", members: ["primary", "fallback"] }],
      defaultTarget: "group",
      behaviors: [],
    };
    const p = plan({
      records: [alias("shop.example.com", "d111.cloudfront.net")],
      distributions: [d],
      etags: new Map([["EDIST", "E2ETAG"]]),
    });
    expect(p.action?.steps).toEqual([
      {
        kind: "cloudfront-origin",
        distributionId: "EDIST",
        originId: "primary",
        from: OLD,
        to: NEW,
        etag: "E2ETAG",
        hostnames: ["shop.example.com"],
      },
    ]);
  });

  it("without the distribution's ETag nothing is planned for it: a question says why", () => {
    const d: DistributionSnapshot = {
      id: "EDIST",
      domainName: "d111.cloudfront.net",
      status: "Deployed",
      enabled: true,
      aliases: ["shop.example.com"],
      origins: [{ id: "primary", domainName: OLD }],
      originGroups: [],
      defaultTarget: "primary",
      behaviors: [],
    };
    const p = plan({ records: [alias("shop.example.com", "d111.cloudfront.net")], distributions: [d] });
    expect(p.action).toBeUndefined();
    expect(p.questions.join("\n")).toMatch(/could not be read \(no ETag\)/);
  });

  it("a record ExternalDNS owns is left to ExternalDNS", () => {
    const txt: RecordSetSnapshot = {
      zoneId: "Z1",
      name: "shop.example.com",
      type: "TXT",
      values: ['"heritage=external-dns,external-dns/owner=prod"'],
    };
    const p = plan({ records: [alias("shop.example.com", OLD), txt] });
    expect(p.action).toBeUndefined();
    expect(p.notes.join("\n")).toMatch(/owned by ExternalDNS/);
  });

  it("a name in no zone that was read (a zone the bot may not read): nothing planned, no guess", () => {
    const p = plan({ zones: [], records: [] });
    expect(p.action).toBeUndefined();
  });
});
