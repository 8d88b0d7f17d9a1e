import type { DistributionConfig } from "@aws-sdk/client-cloudfront";
import type {
  CloudTrailEventSnapshot,
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

/**
 * The narrow set of AWS reads the diagnosis makes. `sdk-adapter.ts` implements it with the SDK v3
 * clients. Every method throws `UnstuckError`; a missing IAM permission is `Forbidden` with
 * `details.action` naming the IAM action (e.g. `ec2:DescribeNetworkInterfaces`).
 */
export interface AwsPort {
  /** Load balancers by exact name, with their tags; names that do not exist are simply absent. */
  loadBalancersByName(names: readonly string[]): Promise<LoadBalancerSnapshot[]>;
  /** Target groups attached to a load balancer, with their tags. */
  targetGroupsOf(loadBalancerArn: string): Promise<TargetGroupSnapshot[]>;
  listenersOf(loadBalancerArn: string): Promise<ListenerSnapshot[]>;
  /** Every rule of every listener of a load balancer, the default rules included (`DescribeRules`). */
  listenerRulesOf(loadBalancerArn: string): Promise<ListenerRuleSnapshot[]>;
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
  /** CloudTrail events by name within a window (newest first, at most `max`). */
  cloudTrailEvents(query: {
    /** Look up by event name, or (when `resourceName` is given instead) by the resource it touched. */
    eventName?: string;
    resourceName?: string;
    start: Date;
    end: Date;
    max: number;
  }): Promise<CloudTrailEventSnapshot[]>;
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
  /**
   * Every load balancer of the account and region (paged), with tags: to match DNS names. With
   * `clusterTags`, only the load balancers tagged `elbv2.k8s.aws/cluster=<clusterTags>` carry their
   * tags, read with the Tagging API (100 a page) instead of ELB's DescribeTags (20 ARNs a call,
   * under ELB's 10-a-second bucket); every other one has empty tags — enough for a question about
   * that cluster's resources only (orphans, preflight).
   */
  allLoadBalancers(options?: { readonly clusterTags?: string }): Promise<LoadBalancerSnapshot[]>;
  /** Every hosted zone (paged). IAM `route53:ListHostedZones`. */
  hostedZones(): Promise<HostedZoneSnapshot[]>;
  /**
   * Record sets of one zone (all pages), or only those named `name` (one short page starting at
   * that name). IAM `route53:ListResourceRecordSets`.
   */
  recordSets(zoneId: string, name?: string): Promise<RecordSetSnapshot[]>;
  /** Every CloudFront distribution (paged). IAM `cloudfront:ListDistributions`. */
  distributions(): Promise<DistributionSnapshot[]>;
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
  /** Every network interface Elastic Load Balancing manages (`requester-id` = `amazon-elb`). */
  elbInterfaces(): Promise<NetworkInterfaceSnapshot[]>;

  // --- Traffic-path repairs and their waits (only the approved executor writes) ---

  /** A distribution's whole config and its ETag. IAM `cloudfront:GetDistributionConfig`. */
  distributionConfig(id: string): Promise<{ etag: string; config: DistributionConfig }>;
  /**
   * Replace a distribution's config, guarded by `ifMatch` (the ETag read when the change was
   * planned): a config changed since then is `UnstuckError(Stale)` (CloudFront's 412
   * PreconditionFailed), nothing written. IAM `cloudfront:UpdateDistribution`.
   */
  updateDistribution(
    id: string,
    config: DistributionConfig,
    ifMatch: string,
  ): Promise<{ etag: string; status: string }>;
  /** `InProgress` until the change reached every edge location, then `Deployed`. IAM `cloudfront:GetDistribution`. */
  distributionStatus(id: string): Promise<{ status: string; etag: string }>;
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

  // --- Orphan clean-up (only the approved executor; each call refused by AWS if still in use) ---

  /** IAM `elasticloadbalancing:DeleteLoadBalancer`. Deleting one already gone is not an error. */
  deleteLoadBalancer(arn: string): Promise<void>;
  /** IAM `elasticloadbalancing:DeleteTargetGroup`; `ResourceInUse` → `UnstuckError(Conflict)`. */
  deleteTargetGroup(arn: string): Promise<void>;
  /** IAM `ec2:DeleteSecurityGroup`; `DependencyViolation` → `UnstuckError(Conflict)`; gone → not an error. */
  deleteSecurityGroup(id: string): Promise<void>;
}

/** One change of a Route 53 change batch, on a record as `recordSets` reads it. */
export interface RecordChange {
  readonly action: "CREATE" | "DELETE" | "UPSERT";
  readonly record: RecordSetSnapshot;
}
