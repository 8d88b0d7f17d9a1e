/**
 * The least destructive fix for each kind of object that keeps a dying security group from being
 * deleted, with the exact command. Pure. An ELB interface of a deleted load balancer is not the
 * operator's to delete while ELB still holds it; an instance's interface keeps its instance and
 * loses only the group; a Lambda function or a VPC endpoint is changed through its own
 * configuration; a rule in another group is revoked by id, naming that group.
 */
import type {
  CloudTrailEventSnapshot,
  NetworkInterfaceSnapshot,
  SecurityGroupSnapshot,
} from "../aws/types.js";
import type { EdgeModel } from "./model.js";
import { compareText } from "../util/collate.js";

export type RemedyKind =
  | "wait-elb-release"
  | "delete-released-interface"
  | "remove-group-from-interface"
  | "lambda-vpc-config"
  | "vpc-endpoint-remove-group"
  | "revoke-rule"
  | "service-managed-interface"
  | "live-dependent";

/** One fix for one dependent. */
export interface Remedy {
  readonly kind: RemedyKind;
  /** The dependent: `eni-…` or `sgr-…`. */
  readonly target: string;
  /** What it is, in words: "ELB interface of deleted load balancer k8s-…". */
  readonly what: string;
  /** What to do, in one sentence. */
  readonly action: string;
  /** Exact commands, in order. */
  readonly commands: readonly string[];
  /**
   * `true` when the operator can apply it now and the controller then finishes by itself (no
   * forced finalizer removal needed); `false` when it is a wait on AWS or not the operator's to change.
   */
  readonly actionable: boolean;
}

/** `AWS Lambda VPC ENI-<function>-<uuid>` → the function name. */
export function lambdaFunctionOf(description: string): string | undefined {
  const m = /^AWS Lambda VPC ENI-(.+)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.exec(
    description.trim(),
  );
  if (m?.[1]) return m[1];
  const loose = /^AWS Lambda VPC ENI-(.+)$/i.exec(description.trim());
  return loose?.[1];
}

/** `VPC Endpoint Interface vpce-…` → the endpoint id. */
export function vpcEndpointOf(description: string): string | undefined {
  return /\b(vpce-[0-9a-f]+)\b/.exec(description)?.[1];
}

const q = (s: string): string => (/^[A-Za-z0-9._\-/:=@,]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** The fix for an interface ELB holds: leave it (live), wait for ELB to release it, or delete it once released. */
function remedyForElbInterface(
  eni: NetworkInterfaceSnapshot,
  elb: NonNullable<ReturnType<EdgeModel["loadBalancerOfInterface"]>>,
  model: Pick<EdgeModel, "liveness">,
): Remedy {
  const kind = elb.type === "net" ? "network" : elb.type === "gwy" ? "gateway" : "application";
  if (elb.loadBalancer) {
    const lv = model.liveness("LoadBalancer", elb.loadBalancer.arn);
    if (lv.state === "live") {
      return {
        kind: "live-dependent",
        target: eni.id,
        what: `ELB interface of live ${kind} load balancer ${elb.name}`,
        action: `leave it: ${lv.why}`,
        commands: [],
        actionable: false,
      };
    }
    return {
      kind: "wait-elb-release",
      target: eni.id,
      what: `ELB interface of ${kind} load balancer ${elb.name}, which the controller is deleting`,
      action: "wait: ELB releases its interfaces once the load balancer is deleted",
      commands: [
        `aws elbv2 describe-load-balancers --names ${q(elb.name)}`,
        `aws ec2 describe-network-interfaces --network-interface-ids ${eni.id} --query 'NetworkInterfaces[0].Status'`,
      ],
      actionable: false,
    };
  }
  if (eni.status === "available") {
    return {
      kind: "delete-released-interface",
      target: eni.id,
      what: `ELB interface ${eni.id} of deleted ${kind} load balancer ${elb.name}, released (available)`,
      action: "delete the released interface",
      commands: [`aws ec2 delete-network-interface --network-interface-id ${eni.id}`],
      actionable: true,
    };
  }
  return {
    kind: "wait-elb-release",
    target: eni.id,
    what: `ELB interface ${eni.id} of deleted ${kind} load balancer ${elb.name}, still ${eni.status} (managed by ${eni.requesterId ?? "amazon-elb"})`,
    action:
      "ELB normally releases it minutes after the load balancer is gone; it cannot be detached or deleted by hand while ELB holds it. When it shows `available`, delete it; if it stays in-use, open an AWS support case",
    commands: [
      `aws ec2 describe-network-interfaces --network-interface-ids ${eni.id} --query 'NetworkInterfaces[0].Status'`,
      `aws ec2 delete-network-interface --network-interface-id ${eni.id}   # once available`,
    ],
    actionable: false,
  };
}

/** The fix for a network interface that uses the dying group `groupId`. */
export function remedyForInterface(
  eni: NetworkInterfaceSnapshot,
  groupId: string,
  model: Pick<EdgeModel, "loadBalancerOfInterface" | "liveness">,
  history: readonly CloudTrailEventSnapshot[] = [],
): Remedy {
  const elb = model.loadBalancerOfInterface(eni);
  if (elb) return remedyForElbInterface(eni, elb, model);
  const type = eni.interfaceType ?? "interface";
  if (type === "lambda" || /^AWS Lambda VPC ENI/i.test(eni.description)) {
    const fn = lambdaFunctionOf(eni.description) ?? "<function>";
    return {
      kind: "lambda-vpc-config",
      target: eni.id,
      what: `Lambda interface of function ${fn}`,
      action: `take ${groupId} out of function ${fn}'s VPC configuration; Lambda then releases the interface by itself (it cannot be detached by hand)`,
      commands: [
        `aws lambda get-function-configuration --function-name ${q(fn)} --query VpcConfig`,
        `aws lambda update-function-configuration --function-name ${q(fn)} --vpc-config SubnetIds=<the same subnets>,SecurityGroupIds=<the groups without ${groupId}>`,
      ],
      actionable: true,
    };
  }
  if (type === "vpc_endpoint" || /^VPC Endpoint Interface/i.test(eni.description)) {
    const vpce = vpcEndpointOf(eni.description) ?? "<vpc-endpoint-id>";
    return {
      kind: "vpc-endpoint-remove-group",
      target: eni.id,
      what: `interface of VPC endpoint ${vpce}`,
      action: `remove ${groupId} from VPC endpoint ${vpce} (its interfaces follow)`,
      commands: [
        `aws ec2 modify-vpc-endpoint --vpc-endpoint-id ${vpce} --remove-security-group-ids ${groupId}`,
      ],
      actionable: true,
    };
  }
  if (eni.requesterManaged || (type !== "interface" && type !== "trunk" && type !== "branch")) {
    return {
      kind: "service-managed-interface",
      target: eni.id,
      what: `${type} interface managed by ${eni.requesterId ?? "an AWS service"} ("${eni.description}")`,
      action: `take ${groupId} off the resource that owns it (its service's own configuration); the interface follows`,
      commands: [`aws ec2 describe-network-interfaces --network-interface-ids ${eni.id}`],
      actionable: true,
    };
  }
  const others = eni.groups.filter((g) => g !== groupId);
  const instance = eni.attachment?.instanceId;
  // Newest first: who last created, attached or re-grouped it — the person to ask before changing it.
  const last = [...history].sort((a, b) => compareText(b.time, a.time))[0];
  const by = last ? `; ${last.name} by ${last.caller ?? "unknown caller"} at ${last.time}` : "";
  if (others.length === 0) {
    return {
      kind: "remove-group-from-interface",
      target: eni.id,
      what: `interface ${eni.id}${instance ? ` of instance ${instance}` : ""} ("${eni.description}"${by}), whose only group is ${groupId}`,
      action: `give it another group in place of ${groupId} (an interface needs at least one)${instance ? "; the instance keeps running" : ""}`,
      commands: [
        `aws ec2 modify-network-interface-attribute --network-interface-id ${eni.id} --groups <replacement-sg>`,
      ],
      actionable: true,
    };
  }
  return {
    kind: "remove-group-from-interface",
    target: eni.id,
    what: `interface ${eni.id}${instance ? ` of instance ${instance}` : eni.status === "available" ? " (unattached)" : ""} ("${eni.description}"${by})`,
    action: `take ${groupId} off the interface and keep its other groups${instance ? "; the instance keeps running" : ""}`,
    commands: [
      `aws ec2 modify-network-interface-attribute --network-interface-id ${eni.id} --groups ${others.join(" ")}`,
    ],
    actionable: true,
  };
}

/** The fix for a rule in another group that names the dying group. */
export function remedyForRule(
  rule: {
    ruleId: string;
    groupId: string;
    groupName: string;
    direction: "ingress" | "egress";
    description?: string;
  },
  owningGroup: SecurityGroupSnapshot | undefined,
  dyingGroupId: string,
): Remedy {
  const owner = owningGroup ? groupOwner(owningGroup) : undefined;
  return {
    kind: "revoke-rule",
    target: rule.ruleId,
    what: `${rule.direction} rule ${rule.ruleId} in ${rule.groupId} (${rule.groupName}${owner ? `, ${owner}` : ""})${rule.description ? ` "${rule.description}"` : ""}`,
    action: `revoke that one rule; it only lets ${dyingGroupId} in, which is being deleted`,
    commands: [
      `aws ec2 revoke-security-group-${rule.direction} --group-id ${rule.groupId} --security-group-rule-ids ${rule.ruleId}`,
    ],
    actionable: true,
  };
}

/** Who owns a group, from its well-known tags. */
export function groupOwner(g: SecurityGroupSnapshot): string | undefined {
  const t = g.tags;
  const eks = t["aws:eks:cluster-name"];
  if (eks !== undefined) return `EKS cluster ${eks}`;
  const nodegroup = t["eks:nodegroup-name"];
  if (nodegroup !== undefined) return `node group ${nodegroup}`;
  const cfn = t["aws:cloudformation:stack-name"];
  if (cfn !== undefined) return `CloudFormation stack ${cfn}`;
  const team = t["team"] ?? t["owner"] ?? t["Owner"];
  if (team !== undefined) return `owner ${team}`;
  return undefined;
}
