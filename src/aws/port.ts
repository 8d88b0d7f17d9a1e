import type {
  CloudTrailEventSnapshot,
  DistributionConfigDocument,
  DistributionSnapshot,
  HostedZoneSnapshot,
  RecordSetSnapshot,
  ListenerRuleSnapshot,
  ListenerSnapshot,
  LoadBalancerSnapshot,
  NetworkInterfaceSnapshot,
  RegisteredTargetSnapshot,
  SecurityGroupRuleSnapshot,
  SecurityGroupSnapshot,
  Tags,
  TargetGroupSnapshot,
} from "./types.js";

/*
 * The AWS calls the product makes, in the product's own types (snapshots of `types.ts`, never an
 * SDK type). One slice per service, each implemented by its adapter (`elbv2.ts`, `ec2.ts`,
 * `route53.ts`, `cloudfront.ts`, `cloudtrail.ts`, `tagging.ts`); `AwsPort` is all of them, as the
 * wiring builds it (`sdk-adapter.ts`). Each consumer depends only on the calls it makes (the
 * consumer ports at the end). Every method throws `UnstuckError`; a missing IAM permission is
 * `Forbidden` with `details.action` naming the IAM action (e.g. `ec2:DescribeNetworkInterfaces`).
 * Only the approved executor calls a write.
 */

/** Elastic Load Balancing (v2): load balancers, target groups, listeners, and their clean-up. */
export interface LoadBalancingPort {
  /** Load balancers by exact name, with their tags; names that do not exist are simply absent. */
  loadBalancersByName(names: readonly string[]): Promise<LoadBalancerSnapshot[]>;
  /** Target groups attached to a load balancer, with their tags. */
  targetGroupsOf(loadBalancerArn: string): Promise<TargetGroupSnapshot[]>;
  listenersOf(loadBalancerArn: string): Promise<ListenerSnapshot[]>;
  /** Every rule of every listener of a load balancer, the default rules included (`DescribeRules`). */
  listenerRulesOf(loadBalancerArn: string): Promise<ListenerRuleSnapshot[]>;
  /**
   * Every load balancer of the account and region (paged), with tags: to match DNS names. With
   * `clusterTags`, only the load balancers tagged `elbv2.k8s.aws/cluster=<clusterTags>` carry their
   * tags, read with the Tagging API (100 a page) instead of ELB's DescribeTags (20 ARNs a call,
   * under ELB's 10-a-second bucket); every other one has empty tags — enough for a question about
   * that cluster's resources only (orphans, preflight, a trace's ownership). `withoutTags`: the
   * listing only, every `tags` empty (ask {@link elbTagsOf} for the few that matter).
   */
  allLoadBalancers(options?: {
    readonly clusterTags?: string;
    readonly withoutTags?: boolean;
  }): Promise<LoadBalancerSnapshot[]>;
  /**
   * Targets registered in one target group (`DescribeTargetHealth`); `undefined` when the target
   * group does not exist. IAM `elasticloadbalancing:DescribeTargetHealth`.
   */
  registeredTargets(targetGroupArn: string): Promise<RegisteredTargetSnapshot[] | undefined>;
  /** Target groups by ARN (20 a call), with attachments but without tags; unknown ARNs are absent. */
  targetGroupsByArn(arns: readonly string[]): Promise<TargetGroupSnapshot[]>;
  /**
   * Every target group of the account (paged), with tags and attachments; `clusterTags` as above;
   * `withoutTags`: attachments only, every `tags` empty (ask {@link elbTagsOf} for the few that matter).
   */
  allTargetGroups(options?: {
    readonly clusterTags?: string;
    readonly withoutTags?: boolean;
  }): Promise<TargetGroupSnapshot[]>;
  /** Tags of these load balancers / target groups (`DescribeTags`, 20 ARNs a call); unknown ARNs are absent. */
  elbTagsOf(arns: readonly string[]): Promise<Map<string, Tags>>;

  /** IAM `elasticloadbalancing:DeleteLoadBalancer`. Deleting one already gone is not an error. */
  deleteLoadBalancer(arn: string): Promise<void>;
  /** IAM `elasticloadbalancing:DeleteTargetGroup`; `ResourceInUse` → `UnstuckError(Conflict)`. */
  deleteTargetGroup(arn: string): Promise<void>;
}

/** EC2: security groups, their rules, the network interfaces that use them, and their clean-up. */
export interface Ec2Port {
  /** Security groups matching every tag given (server-side `tag:<k>` filters) and/or these ids. */
  securityGroups(query: {
    ids?: readonly string[];
    tags?: Readonly<Record<string, string>>;
  }): Promise<SecurityGroupSnapshot[]>;
  /** Groups with an ingress or egress rule that names `groupId` as source/destination. */
  groupsReferencing(groupId: string): Promise<SecurityGroupSnapshot[]>;
  /** Every rule of one group (`DescribeSecurityGroupRules`, filter `group-id`). */
  rulesOf(groupId: string): Promise<SecurityGroupRuleSnapshot[]>;
  /** Network interfaces that use `groupId` (filter `group-id`). */
  networkInterfacesUsing(groupId: string): Promise<NetworkInterfaceSnapshot[]>;
  /**
   * Network interfaces that use any of `groupIds`, by group (filter `group-id` with up to 200
   * values a call): one call per 200 groups instead of one per group. Every asked group is a key.
   */
  networkInterfacesUsingAny(groupIds: readonly string[]): Promise<Map<string, NetworkInterfaceSnapshot[]>>;
  /** Every network interface Elastic Load Balancing manages (`requester-id` = `amazon-elb`). */
  elbInterfaces(): Promise<NetworkInterfaceSnapshot[]>;

  /** IAM `ec2:DeleteSecurityGroup`; `DependencyViolation` → `UnstuckError(Conflict)`; gone → not an error. */
  deleteSecurityGroup(id: string): Promise<void>;
}

/** CloudTrail: who did what, when. */
export interface CloudTrailPort {
  /** CloudTrail events by name within a window (newest first, at most `max`). */
  cloudTrailEvents(query: {
    /** Look up by event name, or (when `resourceName` is given instead) by the resource it touched. */
    eventName?: string;
    resourceName?: string;
    start: Date;
    end: Date;
    max: number;
  }): Promise<CloudTrailEventSnapshot[]>;
}

/** The Resource Groups Tagging API. */
export interface TaggingPort {
  /**
   * Resources carrying every tag given (Resource Groups Tagging API `GetResources`, all pages), of
   * these resource types (`service[:resourceType]`, e.g. `elasticloadbalancing:targetgroup`; empty
   * means any type). Finds what remains of a stack even after its load balancer is gone, without
   * listing the account. A tag given several values (at most 20) matches any of them. IAM action
   * `tag:GetResources`.
   */
  resourcesByTags(
    tags: Readonly<Record<string, string | readonly string[]>>,
    types: readonly string[],
  ): Promise<{ arn: string; tags: Tags }[]>;
}

/** Route 53: zones and records, the repair's change batches and their propagation. */
export interface Route53Port {
  /** Every hosted zone (paged). IAM `route53:ListHostedZones`. */
  hostedZones(): Promise<HostedZoneSnapshot[]>;
  /**
   * Record sets of one zone (all pages), or only those named `name` (one short page starting at
   * that name). IAM `route53:ListResourceRecordSets`.
   */
  recordSets(zoneId: string, name?: string): Promise<RecordSetSnapshot[]>;
  /**
   * One atomic change batch in a zone. A DELETE whose values no longer match exactly fails the whole
   * batch: `UnstuckError(Stale)` (Route 53's InvalidChangeBatch), nothing written. IAM
   * `route53:ChangeResourceRecordSets`.
   */
  changeRecordSets(
    zoneId: string,
    changes: readonly RecordChange[],
    comment: string,
  ): Promise<{ changeId: string; status: string }>;
  /** `PENDING` until every Route 53 name server has the change, then `INSYNC`. IAM `route53:GetChange`. */
  changeStatus(changeId: string): Promise<string>;
}

/** CloudFront: distributions, the repair's config read-modify-write and its deployment. */
export interface CloudFrontPort {
  /**
   * Every CloudFront distribution (paged). IAM `cloudfront:ListDistributions`. A list read within
   * the last 15 s is answered again (one read for every trace of a burst) unless `fresh` asks for
   * a new one — a trace does when a name points at a distribution the list does not hold; this
   * adapter's own `updateDistribution` drops it.
   */
  distributions(options?: { readonly fresh?: boolean }): Promise<DistributionSnapshot[]>;
  /** A distribution's whole config and its ETag. IAM `cloudfront:GetDistributionConfig`. */
  distributionConfig(id: string): Promise<{ etag: string; config: DistributionConfigDocument }>;
  /**
   * Replace a distribution's config (one read by {@link distributionConfig}, changed), guarded by
   * `ifMatch` (the ETag read when the change was planned): a config changed since then is
   * `UnstuckError(Stale)` (CloudFront's 412 PreconditionFailed), nothing written. IAM
   * `cloudfront:UpdateDistribution`.
   */
  updateDistribution(
    id: string,
    config: DistributionConfigDocument,
    ifMatch: string,
  ): Promise<{ etag: string; status: string }>;
  /** `InProgress` until the change reached every edge location, then `Deployed`. IAM `cloudfront:GetDistribution`. */
  distributionStatus(id: string): Promise<{ status: string; etag: string }>;
}

/** Every AWS call of the product: what the composed SDK adapter implements and the wiring hands out. */
export interface AwsPort
  extends LoadBalancingPort, Ec2Port, CloudTrailPort, TaggingPort, Route53Port, CloudFrontPort {}

/** One change of a Route 53 change batch, on a record as `recordSets` reads it. */
export interface RecordChange {
  readonly action: "CREATE" | "DELETE" | "UPSERT";
  readonly record: RecordSetSnapshot;
}

// --- Consumer ports: the calls each part of the product makes, and nothing else ---

/** What a namespace's diagnosis reads (`src/diagnosis`): the blocker's stack, its groups and history. */
export interface DiagnosisAwsReads
  extends
    Pick<
      LoadBalancingPort,
      | "loadBalancersByName"
      | "targetGroupsOf"
      | "listenersOf"
      | "registeredTargets"
      | "targetGroupsByArn"
      | "elbTagsOf"
    >,
    Pick<Ec2Port, "securityGroups" | "groupsReferencing" | "rulesOf" | "networkInterfacesUsing">,
    CloudTrailPort,
    TaggingPort {}

/** What the orphan report reads (`src/orphans`): the account's ELB resources and the groups they leave. */
export interface OrphanAwsReads
  extends
    Pick<LoadBalancingPort, "allLoadBalancers" | "allTargetGroups" | "elbTagsOf">,
    Pick<Ec2Port, "securityGroups" | "networkInterfacesUsingAny" | "elbInterfaces"> {}

/** The orphan clean-up's deletes (`src/actions/delete-orphans.ts`, approved only). */
export interface OrphanAwsDeletes
  extends
    Pick<LoadBalancingPort, "deleteLoadBalancer" | "deleteTargetGroup">,
    Pick<Ec2Port, "deleteSecurityGroup"> {}

/** What a trace reads (`src/traffic/trace.ts`): hostnames → CloudFront → load balancers. */
export interface TraceAwsReads
  extends
    Pick<Route53Port, "hostedZones" | "recordSets">,
    Pick<CloudFrontPort, "distributions">,
    Pick<LoadBalancingPort, "allLoadBalancers" | "elbTagsOf"> {}

/** What planning a path repair reads (`src/traffic/repoint.ts`): a trace, ETags, listener rules. */
export interface RepairPlanAwsReads
  extends
    TraceAwsReads,
    Pick<CloudFrontPort, "distributionConfig">,
    Pick<LoadBalancingPort, "listenerRulesOf"> {}

/** What the repair executor reads and writes (`src/actions/repoint-path.ts`, approved only). */
export interface RepointAwsWrites
  extends
    Pick<Route53Port, "recordSets" | "changeRecordSets">,
    Pick<CloudFrontPort, "distributionConfig" | "updateDistribution"> {}

/** What the waits after a repair poll (`src/jobs/edge-waits.ts`). */
export interface EdgeWaitAwsReads
  extends Pick<Route53Port, "changeStatus">, Pick<CloudFrontPort, "distributionStatus"> {}

/** What the deletion preflight reads (`src/preflight/collect.ts`): the stack and what points at it. */
export interface PreflightAwsReads
  extends
    Pick<LoadBalancingPort, "loadBalancersByName" | "targetGroupsByArn">,
    Pick<Ec2Port, "securityGroups">,
    Pick<Route53Port, "hostedZones" | "recordSets">,
    Pick<CloudFrontPort, "distributions">,
    TaggingPort {}
