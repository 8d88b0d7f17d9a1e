import { describe, expect, it } from "vitest";
import { analyzeAws, type AwsCollected } from "../../../src/diagnosis/aws.js";
import { SEED_OWNERS } from "../../fixtures/seed-ingress.js";

const backend = {
  id: "sg-0backend",
  name: "k8s-traffic-prodeks-5d2b8f0e1c",
  description: "[k8s] Shared Backend SecurityGroup for LoadBalancer",
  tags: { "elbv2.k8s.aws/cluster": "prod-eks", "elbv2.k8s.aws/resource": "backend-sg" },
};
const node = { id: "sg-0node", name: "eks-node", description: "", tags: {} };

function collected(over: Partial<AwsCollected> = {}): AwsCollected {
  return {
    cluster: "prod-eks",
    stack: "myapp/myapp-worker-ingress",
    loadBalancerName: "k8s-myapp-myappwor-0733a56cbb",
    hostname: "k8s-myapp-myappwor-0733a56cbb-1559597038.ap-northeast-2.elb.amazonaws.com",
    loadBalancers: [],
    targetGroups: [],
    listenerArns: [],
    groups: [{ group: backend, role: "backend" }],
    missingGroupIds: [],
    networkInterfaces: new Map(),
    referencing: new Map(),
    deleteSecurityGroupEvents: [],
    problems: [],
    owners: SEED_OWNERS,
    ownersComplete: true,
    blocker: { namespace: "myapp", name: "myapp-worker-ingress", kind: "Ingress" },
    ...over,
  };
}

describe("analyzeAws", () => {
  it("names an ENI that holds the group", () => {
    const f = analyzeAws(
      collected({
        networkInterfaces: new Map([
          [
            "sg-0backend",
            [
              {
                id: "eni-0abc",
                description: "ELB app/k8s-myapp-myappwor-0733a56cbb/4f1c",
                status: "in-use",
                requesterId: "amazon-elb",
                requesterManaged: true,
                groups: ["sg-0backend"],
              },
            ],
          ],
        ]),
      }),
    );
    expect(f.blockedGroups).toHaveLength(1);
    expect(f.summary).toContain("eni-0abc");
    expect(f.summary).toContain("requester amazon-elb");
  });

  it("names only the rules that reference the group, with their owning group", () => {
    const f = analyzeAws(
      collected({
        referencing: new Map([
          [
            "sg-0backend",
            [
              {
                group: node,
                rules: [
                  {
                    id: "sgr-1",
                    groupId: "sg-0node",
                    isEgress: false,
                    referencedGroupId: "sg-0backend",
                    protocol: "tcp",
                    fromPort: 8080,
                    toPort: 8080,
                    description: "elbv2.k8s.aws/targetGroupBinding=shared",
                  },
                  {
                    id: "sgr-2",
                    groupId: "sg-0node",
                    isEgress: false,
                    referencedGroupId: "sg-0other",
                    protocol: "tcp",
                    fromPort: 443,
                    toPort: 443,
                  },
                ],
              },
            ],
          ],
        ]),
      }),
    );
    expect(f.blockedGroups[0]?.referencingRules).toEqual([
      {
        ruleId: "sgr-1",
        groupId: "sg-0node",
        groupName: "eks-node",
        direction: "ingress",
        description: "elbv2.k8s.aws/targetGroupBinding=shared",
        ports: "tcp 8080",
      },
    ]);
  });

  it("keeps CloudTrail failures with the group they name, and says when nothing holds it any more", () => {
    const f = analyzeAws(
      collected({
        deleteSecurityGroupEvents: [
          {
            id: "e1",
            time: "2026-02-12T08:48:21Z",
            name: "DeleteSecurityGroup",
            source: "ec2.amazonaws.com",
            errorCode: "Client.DependencyViolation",
            errorMessage: "resource sg-0backend has a dependent object",
            caller: "arn:aws:sts::1:assumed-role/lbc/x",
            requestParameters: { groupId: "sg-0backend" },
          },
          {
            id: "e2",
            time: "2026-02-12T08:39:52Z",
            name: "DeleteSecurityGroup",
            source: "ec2.amazonaws.com",
            requestParameters: { groupId: "sg-0managed" },
          },
        ],
      }),
    );
    expect(f.blockedGroups[0]?.deleteFailures).toEqual([
      {
        time: "2026-02-12T08:48:21Z",
        groupId: "sg-0backend",
        errorCode: "Client.DependencyViolation",
        errorMessage: "resource sg-0backend has a dependent object",
        caller: "arn:aws:sts::1:assumed-role/lbc/x",
      },
    ]);
    expect(f.summary).toMatch(/no dependent remains now/);
  });

  it("tells the Ingress's deleted ALB from a re-created one with the same name", () => {
    const lb = {
      arn: "arn:lb",
      name: "k8s-myapp-myappwor-0733a56cbb",
      dnsName: "k8s-myapp-myappwor-0733a56cbb-402685983.ap-northeast-2.elb.amazonaws.com",
      state: "active",
      type: "application",
      securityGroups: [],
      tags: {},
    };
    const recreated = analyzeAws(collected({ loadBalancers: [lb] })).resources[0];
    expect(recreated).toMatchObject({ type: "LoadBalancer", exists: false });
    const same = analyzeAws(
      collected({ loadBalancers: [lb], hostname: `dualstack.${lb.dnsName.toUpperCase()}.` }),
    ).resources[0];
    expect(same).toMatchObject({ type: "LoadBalancer", exists: true, id: "arn:lb" });
  });
});
