import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  clusterNameFromArgs,
  ingressStack,
  lbcLoadBalancerName,
  loadBalancerNameFromHostname,
} from "../../../src/edge/lbc-names.js";

describe("Load Balancer Controller naming", () => {
  it("derives the implicit-group name k8s-<ns:8>-<name:8>-<hash:10> from cluster, stack and scheme", () => {
    const stack = ingressStack({ namespace: "myapp", name: "myapp-worker-ingress", annotations: {} });
    expect(stack).toEqual({
      stack: "myapp/myapp-worker-ingress",
      tagKey: "ingress.k8s.aws/stack",
      explicitGroup: false,
      scheme: "internal",
    });
    const hash = createHash("sha256")
      .update("prod-eks")
      .update("myapp/myapp-worker-ingress")
      .update("internal")
      .digest("hex");
    expect(lbcLoadBalancerName("prod-eks", stack)).toBe(`k8s-myapp-myappwor-${hash.slice(0, 10)}`);
  });

  it("uses the group name for an explicit IngressGroup, truncated to 17 characters", () => {
    const stack = ingressStack({
      namespace: "myapp",
      name: "x",
      annotations: {
        "alb.ingress.kubernetes.io/group.name": "shared.public-ingress-group",
        "alb.ingress.kubernetes.io/scheme": "internet-facing",
      },
    });
    expect(stack).toMatchObject({
      stack: "shared.public-ingress-group",
      explicitGroup: true,
      scheme: "internet-facing",
    });
    expect(lbcLoadBalancerName("prod-eks", stack)).toMatch(/^k8s-sharedpublicingre-[0-9a-f]{10}$/);
  });

  it("reads the load balancer name out of an ELB DNS name", () => {
    expect(
      loadBalancerNameFromHostname(
        "k8s-myapp-myappwor-0733a56cbb-1559597038.ap-northeast-2.elb.amazonaws.com",
      ),
    ).toBe("k8s-myapp-myappwor-0733a56cbb");
    expect(loadBalancerNameFromHostname("internal-k8s-a-b-0123456789-42.eu-west-1.elb.amazonaws.com")).toBe(
      "k8s-a-b-0123456789",
    );
    expect(loadBalancerNameFromHostname("dualstack.K8S-A-B-0123456789-42.eu-west-1.elb.amazonaws.com.")).toBe(
      "k8s-a-b-0123456789",
    );
    expect(loadBalancerNameFromHostname("d111111abcdef8.cloudfront.net")).toBeUndefined();
  });

  it("finds --cluster-name in either form", () => {
    expect(clusterNameFromArgs(["--ingress-class=alb", "--cluster-name=prod-eks"])).toBe("prod-eks");
    expect(clusterNameFromArgs(["--cluster-name", "stage"])).toBe("stage");
    expect(clusterNameFromArgs([])).toBeUndefined();
  });

  it("puts a Service (NLB) in its own stack under service.k8s.aws/stack", () => {
    expect(ingressStack({ kind: "Service", namespace: "shop", name: "web", annotations: {} })).toMatchObject({
      stack: "shop/web",
      tagKey: "service.k8s.aws/stack",
    });
  });
});
