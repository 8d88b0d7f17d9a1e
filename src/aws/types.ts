/**
 * Plain snapshots of AWS state, as the adapters collect them. The pure core reads only these,
 * never an SDK type.
 */

export type Tags = Readonly<Record<string, string>>;

export interface LoadBalancerSnapshot {
  readonly arn: string;
  readonly name: string;
  readonly dnsName: string;
  readonly canonicalHostedZoneId?: string;
  readonly state: string;
  readonly type: string;
  readonly scheme?: string;
  readonly vpcId?: string;
  readonly securityGroups: readonly string[];
  readonly createdTime?: string;
  readonly tags: Tags;
}

export interface TargetGroupSnapshot {
  readonly arn: string;
  readonly name: string;
  readonly loadBalancerArns: readonly string[];
  readonly tags: Tags;
}

/** One target registered in a target group, as `DescribeTargetHealth` reports it. */
export interface RegisteredTargetSnapshot {
  /** Instance id, IP address, Lambda ARN or ALB ARN. */
  readonly id: string;
  readonly port?: number;
  readonly availabilityZone?: string;
  /** `healthy`, `unhealthy`, `initial`, `draining` (being deregistered), `unused`, `unavailable`. */
  readonly state: string;
  readonly reason?: string;
}

export interface ListenerSnapshot {
  readonly arn: string;
  readonly loadBalancerArn: string;
  readonly port?: number;
  readonly protocol?: string;
}

/** One rule of a listener, as ELB routes with it: which hosts it matches and whether it forwards. */
export interface ListenerRuleSnapshot {
  readonly listenerArn: string;
  readonly isDefault: boolean;
  /** Its `host-header` values; empty: the rule matches any host. */
  readonly hosts: readonly string[];
  /** Forwards to a target group (rather than a fixed response or a redirect). */
  readonly forwards: boolean;
}

export interface SecurityGroupSnapshot {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly vpcId?: string;
  readonly tags: Tags;
}

export interface SecurityGroupRuleSnapshot {
  readonly id: string;
  readonly groupId: string;
  readonly isEgress: boolean;
  readonly referencedGroupId?: string;
  readonly protocol?: string;
  readonly fromPort?: number;
  readonly toPort?: number;
  readonly description?: string;
}

export interface NetworkInterfaceSnapshot {
  readonly id: string;
  readonly description: string;
  readonly status: string;
  readonly interfaceType?: string;
  readonly requesterId?: string;
  readonly requesterManaged: boolean;
  readonly groups: readonly string[];
  readonly attachment?: {
    readonly id?: string;
    readonly status?: string;
    readonly instanceId?: string;
    readonly instanceOwnerId?: string;
  };
}

export interface CloudTrailEventSnapshot {
  readonly id: string;
  readonly time: string;
  readonly name: string;
  readonly source: string;
  readonly errorCode?: string;
  readonly errorMessage?: string;
  /** ARN of the caller (`userIdentity.arn`), or the user name. */
  readonly caller?: string;
  readonly requestParameters: Readonly<Record<string, unknown>>;
}

export interface HostedZoneSnapshot {
  /** Without the `/hostedzone/` prefix. */
  readonly id: string;
  /** Lower case, without the trailing dot. */
  readonly name: string;
  readonly private: boolean;
  /** How many record sets the zone holds, as ListHostedZones says (absent when it says nothing). */
  readonly recordCount?: number;
}

export interface RecordSetSnapshot {
  readonly zoneId: string;
  /** Lower case, without the trailing dot; `\052` decoded to `*`. */
  readonly name: string;
  readonly type: string;
  readonly ttl?: number;
  /** Plain values (CNAME target, TXT strings, addresses). */
  readonly values: readonly string[];
  readonly alias?: {
    readonly hostedZoneId: string;
    readonly dnsName: string;
    readonly evaluateTargetHealth: boolean;
  };
  /** Routing policy: weighted, failover, latency, geolocation… with its identifier. */
  readonly setIdentifier?: string;
  readonly weight?: number;
  readonly failover?: string;
  readonly region?: string;
}

export interface DistributionSnapshot {
  readonly id: string;
  readonly domainName: string;
  readonly status: string;
  readonly enabled: boolean;
  readonly aliases: readonly string[];
  readonly origins: readonly { readonly id: string; readonly domainName: string }[];
  readonly originGroups: readonly { readonly id: string; readonly members: readonly string[] }[];
  /** Target origin (or origin group) id of the default cache behaviour. */
  readonly defaultTarget: string;
  /** Other cache behaviours: path pattern → target origin id. */
  readonly behaviors: readonly { readonly pathPattern: string; readonly target: string }[];
}

/**
 * A distribution's whole config as `GetDistributionConfig` returns it, to be changed and sent back
 * whole with `UpdateDistribution`: only what the product reads or changes is typed (the origins'
 * ids and domain names), and every other field the object holds is carried through untouched, as
 * read. Only `distributionConfig` makes one; change it by spreading, never build one.
 */
export interface DistributionConfigDocument {
  readonly Origins?: {
    readonly Quantity?: number;
    readonly Items?: readonly DistributionOriginDocument[];
  };
}

/** One origin of a {@link DistributionConfigDocument} (its other fields carried through as read). */
export interface DistributionOriginDocument {
  readonly Id?: string;
  readonly DomainName?: string;
}
