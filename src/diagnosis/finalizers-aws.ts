/**
 * The finalizers of the controllers that talk to AWS: the Load Balancer Controller (and the built-in
 * cloud load-balancer clean-up), Karpenter, and the AWS Controllers for Kubernetes. Pure data.
 *
 * Every string here was checked against the owning project's source or documentation; matchers use
 * the labels the project's own Helm chart puts on its Deployment.
 */
import type { ControllerMatcher, FinalizerInfo } from "./finalizer-info.js";

const LBC: ControllerMatcher = {
  labels: [["app.kubernetes.io/name", "aws-load-balancer-controller"]],
  nameIncludes: ["aws-load-balancer-controller"],
  imageIncludes: ["aws-load-balancer-controller"],
};
const LBC_NAME = "AWS Load Balancer Controller";
const LBC_CLEANUP =
  "the load balancer, its listeners and target groups, the managed security group, the shared backend " +
  "security group (k8s-traffic-<cluster>-*, when no other LBC finalizer remains) and the node security-group rules " +
  "that reference it; check them for orphans after a forced removal";

const KARPENTER: ControllerMatcher = {
  labels: [["app.kubernetes.io/name", "karpenter"]],
  names: ["karpenter"],
  imageIncludes: ["karpenter/controller"],
};

/** `finalizers.<service>.services.k8s.aws/<Kind>`: the AWS service the ACK controller manages. */
function ackService(finalizer: string): string | undefined {
  return /^finalizers\.([a-z0-9-]+)\.services\.k8s\.aws(?:\/|$)/.exec(finalizer)?.[1];
}

/** The Load Balancer Controller's, the cloud controller's, Karpenter's and ACK's finalizers. */
export const AWS_FINALIZERS: readonly FinalizerInfo[] = [
  {
    pattern: "ingress.k8s.aws/resources",
    controller: LBC_NAME,
    purpose: "deletes the Ingress's ALB and its AWS resources before the Ingress goes",
    cleanup: LBC_CLEANUP,
    matcher: LBC,
    awsLoadBalancer: true,
  },
  {
    pattern: "group.ingress.k8s.aws/",
    prefix: true,
    controller: LBC_NAME,
    purpose: "deletes the IngressGroup's shared ALB (or its rules) before the member Ingress goes",
    cleanup: LBC_CLEANUP,
    matcher: LBC,
    awsLoadBalancer: true,
  },
  {
    pattern: "service.k8s.aws/resources",
    controller: LBC_NAME,
    purpose: "deletes the Service's NLB and its target groups before the Service goes",
    cleanup: LBC_CLEANUP.replace("the load balancer", "the NLB"),
    matcher: LBC,
    awsLoadBalancer: true,
  },
  {
    pattern: "elbv2.k8s.aws/resources",
    controller: LBC_NAME,
    purpose: "deregisters targets and revokes node security-group rules of a TargetGroupBinding",
    cleanup: "registered targets and the node security-group ingress rules the binding added",
    matcher: LBC,
    awsLoadBalancer: true,
  },
  {
    pattern: "gateway.k8s.aws/alb",
    controller: LBC_NAME,
    purpose: "deletes the Gateway's ALB",
    cleanup: LBC_CLEANUP,
    matcher: LBC,
    awsLoadBalancer: true,
  },
  {
    pattern: "gateway.k8s.aws/nlb",
    controller: LBC_NAME,
    purpose: "deletes the Gateway's NLB",
    cleanup: LBC_CLEANUP,
    matcher: LBC,
    awsLoadBalancer: true,
  },
  {
    pattern: "service.kubernetes.io/load-balancer-cleanup",
    controller: "cloud-controller-manager (service controller)",
    purpose: "deletes the cloud load balancer of a Service of type LoadBalancer",
    cleanup: "the cloud load balancer (CLB/NLB) and its security groups",
    builtin: true,
    awsLoadBalancer: true,
  },

  // Karpenter (kubernetes-sigs/karpenter, aws/karpenter-provider-aws)
  {
    pattern: "karpenter.sh/termination",
    controller: "Karpenter",
    purpose:
      "drains a Node/NodeClaim and terminates the instance behind it (on a NodePool: its NodeClaims first)",
    cleanup: "the EC2 instance, which keeps running and billing",
    matcher: KARPENTER,
  },
  {
    pattern: "karpenter.k8s.aws/termination",
    controller: "Karpenter",
    purpose: "deletes an EC2NodeClass's instance profile once no NodeClaim uses it",
    cleanup: "the IAM instance profile Karpenter created for the EC2NodeClass",
    matcher: KARPENTER,
  },

  // AWS Controllers for Kubernetes: finalizers.<service>.services.k8s.aws/<Kind>
  {
    pattern: "finalizers.",
    regex: /^finalizers\.[a-z0-9-]+\.services\.k8s\.aws(?:\/|$)/,
    controller: "ACK service controller",
    purpose:
      "deletes the AWS resource an ACK custom resource represents (unless its deletion policy is retain)",
    cleanup: "the AWS resource itself (bucket, queue, table, …), which keeps existing and billing",
    letGo:
      "annotate the resource `services.k8s.aws/deletion-policy=retain`: the controller then removes its finalizer and keeps the AWS resource",
    matcher: { imageIncludes: ["aws-controllers-k8s/"], nameIncludes: ["ack-"] },
    matcherFor: (f) => {
      const svc = ackService(f) ?? "";
      return {
        labels: [["app.kubernetes.io/name", `${svc}-chart`]],
        nameIncludes: [`ack-${svc}-controller`],
        imageIncludes: [`aws-controllers-k8s/${svc}-controller`],
      };
    },
  },
];
