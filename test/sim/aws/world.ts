/**
 * The simulated AWS account: plain data plus the methods that change it with the real services'
 * rules (dependency checks, all-or-nothing change batches, ETag guards). The HTTP layer
 * (`server.ts`) only translates the wire to these methods, so a simulated controller can drive the
 * world directly or over HTTP and get the same behaviour.
 */
import { AwsApiError } from "./errors.js";
import { IdGenerator } from "./ids.js";
import { child, childText, el, type XmlNode } from "./xml.js";

/**
 * ALB (and Classic ELB) canonical hosted zone ids for every commercial region: the "Route 53 Hosted
 * Zone ID (Application Load Balancers, Classic Load Balancers)" column of AWS's "Elastic Load
 * Balancing endpoints and quotas" table. A region missing here has no known id: creating a load
 * balancer there fails (see {@link elbHostedZoneId}) rather than inventing one Route 53 would refuse.
 */
export const ALB_HOSTED_ZONE_IDS: Readonly<Record<string, string>> = {
  "af-south-1": "Z268VQBMOI5EKX",
  "ap-east-1": "Z3DQVH9N71FHZ0",
  "ap-northeast-1": "Z14GRHDCWA56QT",
  "ap-northeast-2": "ZWKZPGTI48KDX",
  "ap-northeast-3": "Z5LXEXXYW11ES",
  "ap-south-1": "ZP97RAFLXTNZK",
  "ap-south-2": "Z0173938T07WNTVAEPZN",
  "ap-southeast-1": "Z1LMS91P8CMLE5",
  "ap-southeast-2": "Z1GM3OXH4ZPM65",
  "ap-southeast-3": "Z08888821HLRG5A9ZRTER",
  "ap-southeast-4": "Z09517862IB2WZLPXG76F",
  "ap-southeast-5": "Z06010284QMVVW7WO5J",
  "ap-southeast-7": "Z0390008CMBRTHFGWBCB",
  "ca-central-1": "ZQSVJUPU6J1EY",
  "ca-west-1": "Z06473681N0SF6OS049SD",
  "eu-central-1": "Z215JYRZR1TBD5",
  "eu-central-2": "Z06391101F2ZOEP8P5EB3",
  "eu-north-1": "Z23TAZ6LKFMNIO",
  "eu-south-1": "Z3ULH7SSC9OV64",
  "eu-south-2": "Z0956581394HF5D5LXGAP",
  "eu-west-1": "Z32O12XQLNTSW2",
  "eu-west-2": "ZHURV8PSTC4K8",
  "eu-west-3": "Z3Q77PNBQS71R4",
  "il-central-1": "Z09170902867EHPV2DABU",
  "me-central-1": "Z08230872XQRWHG2XF6I",
  "me-south-1": "ZS929ML54UICD",
  "mx-central-1": "Z023552324OKD1BB28BH5",
  "sa-east-1": "Z2P70J7HTTTPLU",
  "us-east-1": "Z35SXDOTRQ7X7K",
  "us-east-2": "Z3AADJGX6KTTL2",
  "us-west-1": "Z368ELLRRE2KJ0",
  "us-west-2": "Z1H1FL5HABSF5",
};

/**
 * NLB canonical hosted zone ids for every commercial region (they differ from the ALB ones): the
 * "Route 53 Hosted Zone ID (Network Load Balancers)" column of the same table.
 */
export const NLB_HOSTED_ZONE_IDS: Readonly<Record<string, string>> = {
  "af-south-1": "Z203XCE67M25HM",
  "ap-east-1": "Z12Y7K3UBGUAD1",
  "ap-northeast-1": "Z31USIVHYNEOWT",
  "ap-northeast-2": "ZIBE1TIR4HY56",
  "ap-northeast-3": "Z1GWIQ4HH19I5X",
  "ap-south-1": "ZVDDRBQ08TROA",
  "ap-south-2": "Z0711778386UTO08407HT",
  "ap-southeast-1": "ZKVM4W9LS7TM",
  "ap-southeast-2": "ZCT6FZBF4DROD",
  "ap-southeast-3": "Z01971771FYVNCOVWJU1G",
  "ap-southeast-4": "Z01156963G8MIIL7X90IV",
  "ap-southeast-5": "Z026317210H9ACVTRO6FB",
  "ap-southeast-7": "Z054363131YWATEMWRG5L",
  "ca-central-1": "Z2EPGBW3API2WT",
  "ca-west-1": "Z02754302KBB00W2LKWZ9",
  "eu-central-1": "Z3F0SRJ5LGBH90",
  "eu-central-2": "Z02239872DOALSIDCX66S",
  "eu-north-1": "Z1UDT6IFJ4EJM",
  "eu-south-1": "Z23146JA1KNAFP",
  "eu-south-2": "Z1011216NVTVYADP1SSV",
  "eu-west-1": "Z2IFOLAFXWLO4F",
  "eu-west-2": "ZD4D7Y8KGAS4G",
  "eu-west-3": "Z1CMS0P5QUZ6D5",
  "il-central-1": "Z0313266YDI6ZRHTGQY4",
  "me-central-1": "Z00282643NTTLPANJJG2P",
  "me-south-1": "Z3QSRYVP46NYYV",
  "mx-central-1": "Z02031231H3ID6HYJ9A7U",
  "sa-east-1": "ZTK26PT1VY4CU",
  "us-east-1": "Z26RNL4JYFTOTI",
  "us-east-2": "ZLMOA37VPKANP",
  "us-west-1": "Z24FKFUX50B4VW",
  "us-west-2": "Z18D5FSROUN65G",
};

/**
 * The canonical hosted zone id of a load balancer of this type in this region. An unknown region
 * throws: the simulator never makes up an id (Route 53 refuses an alias into a zone that is not
 * the load balancer's).
 */
export function elbHostedZoneId(type: "application" | "network", region: string): string {
  const id = (type === "network" ? NLB_HOSTED_ZONE_IDS : ALB_HOSTED_ZONE_IDS)[region];
  if (id === undefined) {
    throw new Error(
      `AWS simulator: no ${type === "network" ? "NLB" : "ALB"} canonical hosted zone id is known for region '${region}'; add it to ${type === "network" ? "NLB_HOSTED_ZONE_IDS" : "ALB_HOSTED_ZONE_IDS"} in test/sim/aws/world.ts`,
    );
  }
  return id;
}

/**
 * The DNS names an ELB hosted zone holds, for Route 53's alias check: `*.<region>.elb.amazonaws.com`
 * for the ALB/Classic zone, `*.elb.<region>.amazonaws.com` for the NLB zone; undefined for a zone
 * id that is no ELB's.
 */
export function elbZoneSuffix(hostedZoneId: string): string | undefined {
  for (const [region, id] of Object.entries(ALB_HOSTED_ZONE_IDS))
    if (id === hostedZoneId) return `.${region}.elb.amazonaws.com.`;
  for (const [region, id] of Object.entries(NLB_HOSTED_ZONE_IDS))
    if (id === hostedZoneId) return `.elb.${region}.amazonaws.com.`;
  return undefined;
}

/** The hosted zone id every CloudFront alias target uses. */
export const CLOUDFRONT_HOSTED_ZONE_ID = "Z2FDTNDATAQYW2";

/**
 * Route 53's check of an alias into an AWS service zone: the target name must lie within the zone
 * the hosted zone id names (an ELB zone of the right type and region, CloudFront's zone). Aliases to
 * zones the simulator does not know (another record of the same zone, S3, API Gateway) pass.
 */
function aliasTargetError(type: string, alias: AliasTarget): string | undefined {
  const name = alias.dnsName.toLowerCase();
  const suffix =
    alias.hostedZoneId === CLOUDFRONT_HOSTED_ZONE_ID ? ".cloudfront.net." : elbZoneSuffix(alias.hostedZoneId);
  if (suffix === undefined || name.endsWith(suffix)) return undefined;
  return `Tried to create an alias that targets ${name}, type ${type} in zone ${alias.hostedZoneId}, but the alias target name does not lie within the target zone`;
}

export type Tags = Record<string, string>;

/** Who made a call: what CloudTrail shows as `userIdentity`. */
export interface CallerIdentity {
  readonly type: "AssumedRole" | "IAMUser" | "Root" | "AWSService";
  readonly arn: string;
  readonly principalId: string;
  readonly userName: string;
  readonly sourceIPAddress?: string;
}

export interface LoadBalancer {
  arn: string;
  name: string;
  dnsName: string;
  canonicalHostedZoneId: string;
  createdTime: Date;
  scheme: "internet-facing" | "internal";
  vpcId: string;
  state: "active" | "provisioning" | "active_impaired" | "failed";
  type: "application" | "network";
  securityGroups: string[];
  availabilityZones: { zoneName: string; subnetId: string }[];
  ipAddressType: "ipv4" | "dualstack";
}

export interface TargetDescription {
  id: string;
  port: number;
  health: "healthy" | "unhealthy" | "initial" | "draining" | "unused" | "unavailable";
}

export interface TargetGroup {
  arn: string;
  name: string;
  protocol: string;
  port: number;
  vpcId: string;
  targetType: "instance" | "ip" | "lambda" | "alb";
  healthCheckPath: string;
  targets: TargetDescription[];
}

export interface ListenerRule {
  arn: string;
  priority: string;
  pathPatterns: string[];
  /** `host-header` condition values (an Ingress rule's host); absent: the rule matches any host. */
  hostHeaders?: string[];
  targetGroupArns: string[];
}

export interface Listener {
  arn: string;
  loadBalancerArn: string;
  port: number;
  protocol: string;
  defaultTargetGroupArn?: string;
  rules: ListenerRule[];
  /** ACM certificate ARNs (HTTPS/TLS listeners); the first is the default certificate. */
  certificates?: string[];
}

export interface SecurityGroup {
  id: string;
  name: string;
  description: string;
  vpcId: string;
  ownerId: string;
  tags: Tags;
}

export interface SecurityGroupRule {
  id: string;
  groupId: string;
  isEgress: boolean;
  ipProtocol: string;
  fromPort: number;
  toPort: number;
  cidrIpv4?: string;
  referencedGroupId?: string;
  description?: string;
}

export interface NetworkInterface {
  id: string;
  description: string;
  subnetId: string;
  vpcId: string;
  availabilityZone: string;
  groups: string[];
  ownerId: string;
  requesterId?: string;
  requesterManaged: boolean;
  status: "available" | "in-use" | "attaching" | "detaching" | "associated";
  interfaceType: string;
  privateIpAddress: string;
  macAddress: string;
  /** Unset means true, AWS's default; NAT instances and appliances turn it off. */
  sourceDestCheck?: boolean;
  attachment?: {
    id: string;
    instanceId?: string;
    instanceOwnerId: string;
    deviceIndex: number;
    status: "attaching" | "attached" | "detaching" | "detached";
    attachTime: Date;
    deleteOnTermination?: boolean;
  };
  tags: Tags;
  /** When true the ENI survives its ALB's deletion: the "ELB left an ENI behind" failure. */
  retainOnLoadBalancerDelete?: boolean;
}

/**
 * The `InterfaceType` AWS gives the interfaces its services create, read off their descriptions
 * (`ELB net/…` → `network_load_balancer`, …). An ALB's interfaces are plain `interface`, as on AWS.
 */
export function interfaceTypeFor(description: string): string {
  if (description.startsWith("ELB net/")) return "network_load_balancer";
  if (description.startsWith("ELB gwy/")) return "gateway_load_balancer";
  if (description.startsWith("VPC Endpoint Interface ")) return "vpc_endpoint";
  if (description.startsWith("AWS Lambda VPC ENI-")) return "lambda";
  if (description.startsWith("Interface for NAT Gateway ")) return "nat_gateway";
  return "interface";
}

/** The account id AWS PrivateLink shows as `RequesterId` on interface-endpoint ENIs (AWS docs' example). */
export const VPC_ENDPOINT_REQUESTER_ID = "727180483921";

/**
 * Who a service-made attachment belongs to: AWS shows `amazon-aws` as `InstanceOwnerId` on the
 * `ela-attach-…` attachments of ELB, Lambda and endpoint interfaces, and refuses to detach them.
 */
export const SERVICE_ATTACHMENT_OWNER = "amazon-aws";

/** An EC2 instance, only as far as network interfaces need one (attach targets, device indexes). */
export interface Ec2Instance {
  id: string;
  vpcId: string;
  subnetId: string;
  availabilityZone: string;
}

/** An interface VPC endpoint: one requester-managed ENI per subnet, all carrying the endpoint's groups. */
export interface VpcEndpoint {
  id: string;
  type: "Interface";
  vpcId: string;
  serviceName: string;
  state: "available" | "pending" | "deleting" | "failed";
  subnetIds: string[];
  groups: string[];
  networkInterfaceIds: string[];
  privateDnsEnabled: boolean;
  creationTimestamp: Date;
  ownerId: string;
  tags: Tags;
}

export interface AliasTarget {
  hostedZoneId: string;
  dnsName: string;
  evaluateTargetHealth: boolean;
}

export interface ResourceRecordSet {
  name: string;
  type: string;
  setIdentifier?: string;
  weight?: number;
  ttl?: number;
  values?: string[];
  aliasTarget?: AliasTarget;
}

export interface HostedZone {
  id: string;
  name: string;
  callerReference: string;
  comment?: string;
  privateZone: boolean;
  records: ResourceRecordSet[];
}

export interface Route53Change {
  id: string;
  submittedAt: Date;
  comment?: string;
}

export interface Distribution {
  id: string;
  arn: string;
  domainName: string;
  etag: string;
  lastModifiedTime: Date;
  /** The whole DistributionConfig as the client sent it (or the scenario built it). */
  config: XmlNode;
  /** When set, the distribution reports `Deployed` only once the clock passes this instant. */
  deployedAt: Date;
  /**
   * The config the edge locations still serve while an update is `InProgress`: CloudFront keeps
   * answering with the last deployed config until the new one has propagated.
   */
  liveConfig?: XmlNode;
}

export interface TrailEvent {
  eventId: string;
  eventName: string;
  eventSource: string;
  eventTime: Date;
  readOnly: boolean;
  accessKeyId: string;
  username: string;
  resources: { ResourceType: string; ResourceName: string }[];
  /** The object CloudTrail serialises into `CloudTrailEvent`. */
  detail: Record<string, unknown>;
}

/** What the protocol layer reports for one call, so the world can keep a CloudTrail record. */
export interface ApiCallRecord {
  readonly service: string;
  readonly action: string;
  readonly accessKeyId: string;
  readonly userAgent: string;
  readonly requestId: string;
  readonly region: string;
  readonly requestParameters: Record<string, unknown> | null;
  readonly responseElements: Record<string, unknown> | null;
  readonly errorCode?: string;
  readonly errorMessage?: string;
  readonly resources: { ResourceType: string; ResourceName: string }[];
}

const EVENT_SOURCES: Readonly<Record<string, string>> = {
  elasticloadbalancing: "elasticloadbalancing.amazonaws.com",
  ec2: "ec2.amazonaws.com",
  route53: "route53.amazonaws.com",
  cloudfront: "cloudfront.amazonaws.com",
  cloudtrail: "cloudtrail.amazonaws.com",
};

/** Options for {@link AwsWorld}. */
export interface AwsWorldOptions {
  accountId?: string;
  region?: string;
  now?: () => Date;
  /** How long a distribution stays `InProgress` after an update. */
  cloudFrontDeployMs?: number;
  /** How long a Route 53 change stays `PENDING`. */
  route53SyncMs?: number;
  seed?: number;
}

/** Lower-cases and adds the trailing dot Route 53 always stores. */
export function fqdn(name: string): string {
  const n = name.toLowerCase();
  return n.endsWith(".") ? n : `${n}.`;
}

function sameAlias(a: AliasTarget | undefined, b: AliasTarget | undefined): boolean {
  if (!a || !b) return a === b;
  return (
    a.hostedZoneId === b.hostedZoneId &&
    fqdn(a.dnsName) === fqdn(b.dnsName) &&
    a.evaluateTargetHealth === b.evaluateTargetHealth
  );
}

function sameRecord(a: ResourceRecordSet, b: ResourceRecordSet): boolean {
  return (
    a.ttl === b.ttl &&
    a.weight === b.weight &&
    // Route 53 compares a DELETE's values as a set: the order they are listed in does not matter.
    JSON.stringify([...(a.values ?? [])].sort()) === JSON.stringify([...(b.values ?? [])].sort()) &&
    sameAlias(a.aliasTarget, b.aliasTarget)
  );
}

/** Route 53 lists records by name with its labels reversed (`com.example.api`), then type, then set id. */
export function recordSortKey(r: { name: string; type: string; setIdentifier?: string }): string {
  return `${fqdn(r.name).slice(0, -1).split(".").reverse().join(".")}\u0000${r.type}\u0000${r.setIdentifier ?? ""}`;
}

/** The simulated account. All collections are public plain data; mutate through the methods to keep the rules. */
export class AwsWorld {
  public readonly accountId: string;
  public readonly region: string;
  public readonly ids: IdGenerator;
  public now: () => Date;
  public cloudFrontDeployMs: number;
  public route53SyncMs: number;

  public readonly loadBalancers = new Map<string, LoadBalancer>();
  public readonly targetGroups = new Map<string, TargetGroup>();
  public readonly listeners = new Map<string, Listener>();
  public readonly tags = new Map<string, Tags>();
  public readonly securityGroups = new Map<string, SecurityGroup>();
  public readonly securityGroupRules = new Map<string, SecurityGroupRule>();
  public readonly networkInterfaces = new Map<string, NetworkInterface>();
  public readonly instances = new Map<string, Ec2Instance>();
  public readonly vpcEndpoints = new Map<string, VpcEndpoint>();
  public readonly hostedZones = new Map<string, HostedZone>();
  public readonly changes = new Map<string, Route53Change>();
  public readonly distributions = new Map<string, Distribution>();
  public readonly trail: TrailEvent[] = [];
  /** Access key id → identity. Unknown keys act as the bot's own role. */
  public readonly identities = new Map<string, CallerIdentity>();

  public constructor(options: AwsWorldOptions = {}) {
    this.accountId = options.accountId ?? "123456789012";
    this.region = options.region ?? "ap-northeast-2";
    this.now = options.now ?? (() => new Date());
    this.cloudFrontDeployMs = options.cloudFrontDeployMs ?? 0;
    this.route53SyncMs = options.route53SyncMs ?? 0;
    this.ids = new IdGenerator(options.seed);
  }

  // ---------------------------------------------------------------- identities and CloudTrail

  /** Makes calls signed with `accessKeyId` appear in CloudTrail as `identity`. */
  public setIdentity(
    accessKeyId: string,
    identity: Omit<CallerIdentity, "type" | "principalId" | "userName"> & Partial<CallerIdentity>,
  ): void {
    const assumed = /^arn:aws:sts::\d+:assumed-role\/([^/]+)\/(.+)$/.exec(identity.arn);
    const user = /^arn:aws:iam::\d+:user\/(.+)$/.exec(identity.arn);
    this.identities.set(accessKeyId, {
      type: identity.type ?? (assumed ? "AssumedRole" : user ? "IAMUser" : "Root"),
      arn: identity.arn,
      principalId:
        identity.principalId ?? `AROA${this.ids.upper(17)}${assumed ? `:${assumed[2] ?? ""}` : ""}`,
      userName: identity.userName ?? assumed?.[2] ?? user?.[1] ?? "root",
      ...(identity.sourceIPAddress !== undefined ? { sourceIPAddress: identity.sourceIPAddress } : {}),
    });
  }

  public identityFor(accessKeyId: string): CallerIdentity {
    return (
      this.identities.get(accessKeyId) ?? {
        type: "AssumedRole",
        arn: `arn:aws:sts::${this.accountId}:assumed-role/unstuck-bot/${accessKeyId}`,
        principalId: `AROAUNSTUCKBOT000000:${accessKeyId}`,
        userName: accessKeyId,
      }
    );
  }

  /** Records one API call the way CloudTrail would (failed calls included). */
  public recordApiCall(call: ApiCallRecord, at: Date = this.now()): TrailEvent {
    const identity = this.identityFor(call.accessKeyId);
    const eventId = this.ids.uuid();
    const eventSource = EVENT_SOURCES[call.service] ?? `${call.service}.amazonaws.com`;
    const readOnly = /^(Describe|List|Get|Lookup)/.test(call.action);
    const [, roleName] = /assumed-role\/([^/]+)\//.exec(identity.arn) ?? [];
    const detail: Record<string, unknown> = {
      eventVersion: "1.09",
      userIdentity: {
        type: identity.type,
        principalId: identity.principalId,
        arn: identity.arn,
        accountId: this.accountId,
        accessKeyId: call.accessKeyId,
        ...(identity.type === "AssumedRole"
          ? {
              sessionContext: {
                sessionIssuer: {
                  type: "Role",
                  principalId: identity.principalId.split(":")[0],
                  arn: `arn:aws:iam::${this.accountId}:role/${roleName ?? "unknown"}`,
                  accountId: this.accountId,
                  userName: roleName,
                },
                attributes: {
                  creationDate: at.toISOString().replace(/\.\d{3}Z$/, "Z"),
                  mfaAuthenticated: "false",
                },
              },
            }
          : {}),
      },
      eventTime: at.toISOString().replace(/\.\d{3}Z$/, "Z"),
      eventSource,
      eventName: call.action,
      awsRegion: call.service === "route53" || call.service === "cloudfront" ? "us-east-1" : call.region,
      sourceIPAddress: identity.sourceIPAddress ?? "10.0.0.1",
      userAgent: call.userAgent,
      ...(call.errorCode !== undefined ? { errorCode: call.errorCode, errorMessage: call.errorMessage } : {}),
      requestParameters: call.requestParameters,
      responseElements: call.responseElements,
      requestID: call.requestId,
      eventID: eventId,
      readOnly,
      eventType: "AwsApiCall",
      managementEvent: true,
      recipientAccountId: this.accountId,
      eventCategory: "Management",
    };
    const event: TrailEvent = {
      eventId,
      eventName: call.action,
      eventSource,
      eventTime: at,
      readOnly,
      accessKeyId: call.accessKeyId,
      username: identity.userName,
      resources: call.resources,
      detail,
    };
    this.trail.push(event);
    return event;
  }

  // ---------------------------------------------------------------- ELBv2

  private elbArn(kind: string, rest: string): string {
    return `arn:aws:elasticloadbalancing:${this.region}:${this.accountId}:${kind}/${rest}`;
  }

  /**
   * Creates an ALB (or, with `type: "network"`, an NLB) with a real-looking ARN and DNS name and a
   * new DNS suffix every time, as on AWS: `[internal-]<name>-<digits>.<region>.elb.amazonaws.com`
   * for an ALB, `<name>-<16 hex>.elb.<region>.amazonaws.com` for an NLB (internal or not).
   */
  public createLoadBalancer(input: {
    name: string;
    type?: LoadBalancer["type"];
    scheme?: LoadBalancer["scheme"];
    securityGroups?: string[];
    vpcId?: string;
    subnets?: { zoneName: string; subnetId: string }[];
    tags?: Tags;
    dnsSuffix?: string;
    arnId?: string;
    createdTime?: Date;
    state?: LoadBalancer["state"];
  }): LoadBalancer {
    if ([...this.loadBalancers.values()].some((lb) => lb.name === input.name)) {
      throw new AwsApiError("DuplicateLoadBalancerName", "A load balancer with the same name exists");
    }
    if (
      !/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,30}[A-Za-z0-9])?$/.test(input.name) ||
      input.name.startsWith("internal-")
    ) {
      throw new AwsApiError("ValidationError", `The load balancer name '${input.name}' is not valid`);
    }
    for (const sg of input.securityGroups ?? []) this.requireGroup(sg, "InvalidSecurityGroup");
    const scheme = input.scheme ?? "internet-facing";
    const type = input.type ?? "application";
    const prefix = scheme === "internal" ? "internal-" : "";
    const dnsName =
      type === "network"
        ? `${input.name}-${input.dnsSuffix ?? this.ids.hex(16)}.elb.${this.region}.amazonaws.com`
        : `${prefix}${input.name}-${input.dnsSuffix ?? this.ids.digits(10)}.${this.region}.elb.amazonaws.com`;
    const canonicalHostedZoneId = elbHostedZoneId(type, this.region);
    const lb: LoadBalancer = {
      arn: this.elbArn(
        "loadbalancer",
        `${type === "network" ? "net" : "app"}/${input.name}/${input.arnId ?? this.ids.hex(16)}`,
      ),
      name: input.name,
      dnsName,
      canonicalHostedZoneId,
      createdTime: input.createdTime ?? this.now(),
      scheme,
      vpcId: input.vpcId ?? "vpc-0a1b2c3d4e5f60718",
      state: input.state ?? "active",
      type,
      securityGroups: [...(input.securityGroups ?? [])],
      availabilityZones: input.subnets ?? [
        { zoneName: `${this.region}a`, subnetId: "subnet-0a11aa11aa11aa11a" },
        { zoneName: `${this.region}c`, subnetId: "subnet-0c33cc33cc33cc33c" },
      ],
      ipAddressType: "ipv4",
    };
    this.loadBalancers.set(lb.arn, lb);
    this.tags.set(lb.arn, { ...(input.tags ?? {}) });
    return lb;
  }

  /** What ELB writes into its ENIs' descriptions: `ELB app/<name>/<id>` or `ELB net/<name>/<id>`. */
  public loadBalancerEniDescription(lb: LoadBalancer): string {
    return `ELB ${lb.type === "network" ? "net" : "app"}/${lb.name}/${lb.arn.split("/").pop() ?? ""}`;
  }

  /** The ELB-owned ENIs of a load balancer, as ELB creates them (one per AZ, using the LB's groups). */
  public createLoadBalancerEnis(lbArn: string): NetworkInterface[] {
    const lb = this.requireLoadBalancer(lbArn);
    return lb.availabilityZones.map((az) =>
      this.createNetworkInterface({
        description: this.loadBalancerEniDescription(lb),
        subnetId: az.subnetId,
        availabilityZone: az.zoneName,
        vpcId: lb.vpcId,
        groups: lb.securityGroups,
        requesterId: "amazon-elb",
        requesterManaged: true,
        status: "in-use",
        attached: true,
      }),
    );
  }

  public requireLoadBalancer(arn: string): LoadBalancer {
    const lb = this.loadBalancers.get(arn);
    if (!lb) throw new AwsApiError("LoadBalancerNotFound", `Load balancer '${arn}' not found`);
    return lb;
  }

  /** Deletes an ALB, its listeners and (unless told to linger) its ELB ENIs. Deleting a missing ARN succeeds, as on AWS. */
  public deleteLoadBalancer(arn: string): void {
    const lb = this.loadBalancers.get(arn);
    if (!lb) return;
    for (const l of [...this.listeners.values()]) if (l.loadBalancerArn === arn) this.listeners.delete(l.arn);
    const description = this.loadBalancerEniDescription(lb);
    for (const eni of [...this.networkInterfaces.values()]) {
      if (eni.description === description && eni.retainOnLoadBalancerDelete !== true) {
        this.networkInterfaces.delete(eni.id);
      }
    }
    this.loadBalancers.delete(arn);
    this.tags.delete(arn);
  }

  public createTargetGroup(input: {
    name: string;
    protocol?: string;
    port?: number;
    vpcId?: string;
    targetType?: TargetGroup["targetType"];
    healthCheckPath?: string;
    tags?: Tags;
    targets?: TargetDescription[];
    arnId?: string;
  }): TargetGroup {
    if ([...this.targetGroups.values()].some((tg) => tg.name === input.name)) {
      throw new AwsApiError("DuplicateTargetGroupName", "A target group with the same name exists");
    }
    const tg: TargetGroup = {
      arn: this.elbArn("targetgroup", `${input.name}/${input.arnId ?? this.ids.hex(16)}`),
      name: input.name,
      protocol: input.protocol ?? "HTTP",
      port: input.port ?? 80,
      vpcId: input.vpcId ?? "vpc-0a1b2c3d4e5f60718",
      targetType: input.targetType ?? "ip",
      healthCheckPath: input.healthCheckPath ?? "/",
      targets: [...(input.targets ?? [])],
    };
    this.targetGroups.set(tg.arn, tg);
    this.tags.set(tg.arn, { ...(input.tags ?? {}) });
    return tg;
  }

  public requireTargetGroup(arn: string): TargetGroup {
    const tg = this.targetGroups.get(arn);
    if (!tg) throw new AwsApiError("TargetGroupNotFound", `Target groups '${arn}' not found`);
    return tg;
  }

  /** The ARNs of the load balancers whose listeners or rules forward to `tgArn`. */
  public loadBalancersOfTargetGroup(tgArn: string): string[] {
    const out = new Set<string>();
    for (const l of this.listeners.values()) {
      if (l.defaultTargetGroupArn === tgArn || l.rules.some((r) => r.targetGroupArns.includes(tgArn))) {
        out.add(l.loadBalancerArn);
      }
    }
    return [...out];
  }

  /**
   * RegisterTargets: each `id:port` once (the port defaults to the group's). A new target is
   * `healthy` when a listener or rule forwards to the group and `unused` otherwise (the simulator
   * runs no health checks). An `ip` group takes only IPv4 addresses, an `instance` group only
   * instance ids, as ELB's validation does.
   */
  public registerTargets(arn: string, targets: readonly { id: string; port?: number }[]): void {
    const tg = this.requireTargetGroup(arn);
    for (const t of targets) {
      if (tg.targetType === "ip" && !/^\d{1,3}(?:\.\d{1,3}){3}$/.test(t.id))
        throw new AwsApiError("ValidationError", `The IP address '${t.id}' is not a valid IPv4 address`);
      if (tg.targetType === "instance" && !/^i-[0-9a-f]{8,17}$/.test(t.id))
        throw new AwsApiError("ValidationError", `Instance ID '${t.id}' is not valid`);
    }
    const inUse = this.loadBalancersOfTargetGroup(arn).length > 0;
    for (const t of targets) {
      const port = t.port ?? tg.port;
      if (tg.targets.some((x) => x.id === t.id && x.port === port)) continue;
      tg.targets.push({ id: t.id, port, health: inUse ? "healthy" : "unused" });
    }
  }

  /**
   * DeregisterTargets: the given `id:port` targets leave the group at once (ELB drains them for the
   * deregistration delay first; the simulator skips the wait). Unknown targets are ignored.
   */
  public deregisterTargets(arn: string, targets: readonly { id: string; port?: number }[]): void {
    const tg = this.requireTargetGroup(arn);
    tg.targets = tg.targets.filter(
      (x) => !targets.some((t) => t.id === x.id && (t.port ?? tg.port) === x.port),
    );
  }

  public deleteTargetGroup(arn: string): void {
    this.requireTargetGroup(arn);
    if (this.loadBalancersOfTargetGroup(arn).length > 0) {
      throw new AwsApiError(
        "ResourceInUse",
        `Target group '${arn}' is currently in use by a listener or a rule`,
      );
    }
    this.targetGroups.delete(arn);
    this.tags.delete(arn);
  }

  public createListener(input: {
    loadBalancerArn: string;
    port: number;
    protocol?: string;
    defaultTargetGroupArn?: string;
    rules?: {
      priority: string;
      pathPatterns?: string[];
      hostHeaders?: string[];
      targetGroupArns: string[];
    }[];
    certificates?: string[];
  }): Listener {
    const lb = this.requireLoadBalancer(input.loadBalancerArn);
    if (input.defaultTargetGroupArn !== undefined) this.requireTargetGroup(input.defaultTargetGroupArn);
    const lbPath = lb.arn.split(":loadbalancer/")[1] ?? "";
    const listenerId = this.ids.hex(16);
    const listener: Listener = {
      arn: this.elbArn("listener", `${lbPath}/${listenerId}`),
      loadBalancerArn: lb.arn,
      port: input.port,
      protocol: input.protocol ?? "HTTP",
      ...(input.defaultTargetGroupArn !== undefined
        ? { defaultTargetGroupArn: input.defaultTargetGroupArn }
        : {}),
      rules: (input.rules ?? []).map((r) => ({
        arn: this.elbArn("listener-rule", `${lbPath}/${listenerId}/${this.ids.hex(16)}`),
        priority: r.priority,
        pathPatterns: r.pathPatterns ?? ["/*"],
        ...(r.hostHeaders !== undefined && r.hostHeaders.length > 0
          ? { hostHeaders: [...r.hostHeaders] }
          : {}),
        targetGroupArns: r.targetGroupArns,
      })),
      ...(input.certificates !== undefined ? { certificates: [...input.certificates] } : {}),
    };
    this.listeners.set(listener.arn, listener);
    return listener;
  }

  /** ModifyListener: the default action (a target group, or none = fixed 404) and the certificates. */
  public modifyListener(
    arn: string,
    input: { defaultTargetGroupArn?: string | undefined; certificates?: string[] },
  ): Listener {
    const l = this.listeners.get(arn);
    if (!l) throw new AwsApiError("ListenerNotFound", `Listener '${arn}' not found`);
    if (input.defaultTargetGroupArn !== undefined) this.requireTargetGroup(input.defaultTargetGroupArn);
    if ("defaultTargetGroupArn" in input) {
      if (input.defaultTargetGroupArn === undefined) delete l.defaultTargetGroupArn;
      else l.defaultTargetGroupArn = input.defaultTargetGroupArn;
    }
    if (input.certificates !== undefined) l.certificates = [...input.certificates];
    return l;
  }

  /** Replaces a listener's rules (what CreateRule/ModifyRule/DeleteRule converge to). */
  public setListenerRules(
    arn: string,
    rules: { priority: string; pathPatterns?: string[]; hostHeaders?: string[]; targetGroupArns: string[] }[],
  ): Listener {
    const l = this.listeners.get(arn);
    if (!l) throw new AwsApiError("ListenerNotFound", `Listener '${arn}' not found`);
    for (const r of rules) for (const tg of r.targetGroupArns) this.requireTargetGroup(tg);
    const lbPath = l.arn.split(":listener/")[1] ?? "";
    l.rules = rules.map((r) => {
      const kept = l.rules.find((x) => x.priority === r.priority);
      return {
        arn: kept?.arn ?? this.elbArn("listener-rule", `${lbPath}/${this.ids.hex(16)}`),
        priority: r.priority,
        pathPatterns: r.pathPatterns ?? ["/*"],
        ...(r.hostHeaders !== undefined && r.hostHeaders.length > 0
          ? { hostHeaders: [...r.hostHeaders] }
          : {}),
        targetGroupArns: [...r.targetGroupArns],
      };
    });
    return l;
  }

  public deleteListener(arn: string): void {
    if (!this.listeners.has(arn)) throw new AwsApiError("ListenerNotFound", `Listener '${arn}' not found`);
    this.listeners.delete(arn);
  }

  public addTags(arn: string, tags: Tags): void {
    this.tags.set(arn, { ...(this.tags.get(arn) ?? {}), ...tags });
  }

  // ---------------------------------------------------------------- EC2

  public requireGroup(id: string, code = "InvalidGroup.NotFound"): SecurityGroup {
    if (!/^sg-[0-9a-f]{8,17}$/.test(id) && code === "InvalidGroup.NotFound") {
      throw new AwsApiError("InvalidGroupId.Malformed", `Invalid id: "${id}" (expecting "sg-...")`);
    }
    const sg = this.securityGroups.get(id);
    if (!sg) {
      if (code === "InvalidSecurityGroup")
        throw new AwsApiError(code, `Security group '${id}' does not exist`);
      throw new AwsApiError(code, `The security group '${id}' does not exist`);
    }
    return sg;
  }

  public createSecurityGroup(input: {
    name: string;
    description: string;
    vpcId?: string;
    tags?: Tags;
    id?: string;
    defaultEgress?: boolean;
  }): SecurityGroup {
    const vpcId = input.vpcId ?? "vpc-0a1b2c3d4e5f60718";
    if ([...this.securityGroups.values()].some((g) => g.name === input.name && g.vpcId === vpcId)) {
      throw new AwsApiError(
        "InvalidGroup.Duplicate",
        `The security group '${input.name}' already exists for VPC '${vpcId}'`,
      );
    }
    const sg: SecurityGroup = {
      id: input.id ?? this.ids.securityGroupId(),
      name: input.name,
      description: input.description,
      vpcId,
      ownerId: this.accountId,
      tags: { ...(input.tags ?? {}) },
    };
    this.securityGroups.set(sg.id, sg);
    // Every new VPC security group starts with the allow-all egress rule.
    if (input.defaultEgress !== false) {
      const ruleId = this.ids.ruleId();
      this.securityGroupRules.set(ruleId, {
        id: ruleId,
        groupId: sg.id,
        isEgress: true,
        ipProtocol: "-1",
        fromPort: -1,
        toPort: -1,
        cidrIpv4: "0.0.0.0/0",
      });
    }
    return sg;
  }

  /** Why a group cannot be deleted, or undefined when it can. Mirrors the checks EC2 makes. */
  public dependentsOf(groupId: string): {
    networkInterfaces: string[];
    referencingRules: string[];
    loadBalancers: string[];
  } {
    return {
      networkInterfaces: [...this.networkInterfaces.values()]
        .filter((e) => e.groups.includes(groupId))
        .map((e) => e.id),
      referencingRules: [...this.securityGroupRules.values()]
        .filter((r) => r.referencedGroupId === groupId && r.groupId !== groupId)
        .map((r) => r.id),
      loadBalancers: [...this.loadBalancers.values()]
        .filter((lb) => lb.securityGroups.includes(groupId))
        .map((lb) => lb.arn),
    };
  }

  public deleteSecurityGroup(groupId: string): void {
    this.requireGroup(groupId);
    const d = this.dependentsOf(groupId);
    if (d.networkInterfaces.length + d.referencingRules.length + d.loadBalancers.length > 0) {
      throw new AwsApiError("DependencyViolation", `resource ${groupId} has a dependent object`);
    }
    for (const [id, r] of this.securityGroupRules)
      if (r.groupId === groupId) this.securityGroupRules.delete(id);
    this.securityGroups.delete(groupId);
  }

  /** Adds rules; a rule identical to an existing one fails the whole call with `InvalidPermission.Duplicate`. */
  public authorize(
    groupId: string,
    isEgress: boolean,
    rules: Omit<SecurityGroupRule, "id" | "groupId" | "isEgress">[],
  ): SecurityGroupRule[] {
    this.requireGroup(groupId);
    for (const r of rules) {
      if (r.referencedGroupId !== undefined) this.requireGroup(r.referencedGroupId);
      const dup = [...this.securityGroupRules.values()].find(
        (x) =>
          x.groupId === groupId &&
          x.isEgress === isEgress &&
          x.ipProtocol === r.ipProtocol &&
          x.fromPort === r.fromPort &&
          x.toPort === r.toPort &&
          x.cidrIpv4 === r.cidrIpv4 &&
          x.referencedGroupId === r.referencedGroupId,
      );
      if (dup) {
        const peer = r.referencedGroupId ?? r.cidrIpv4 ?? "";
        const proto = r.ipProtocol === "-1" ? "ALL" : r.ipProtocol.toUpperCase();
        throw new AwsApiError(
          "InvalidPermission.Duplicate",
          `the specified rule "peer: ${peer}, ${proto}, from port: ${r.fromPort}, to port: ${r.toPort}, ALLOW" already exists`,
        );
      }
    }
    return rules.map((r) => {
      const rule: SecurityGroupRule = { ...r, id: this.ids.ruleId(), groupId, isEgress };
      this.securityGroupRules.set(rule.id, rule);
      return rule;
    });
  }

  /** Removes rules by id or by matching permission; an unknown one fails the whole call. */
  public revoke(
    groupId: string,
    isEgress: boolean,
    selector: { ruleIds?: string[]; rules?: Omit<SecurityGroupRule, "id" | "groupId" | "isEgress">[] },
  ): SecurityGroupRule[] {
    this.requireGroup(groupId);
    const found: SecurityGroupRule[] = [];
    for (const id of selector.ruleIds ?? []) {
      const r = this.securityGroupRules.get(id);
      if (r?.groupId !== groupId || r.isEgress !== isEgress) {
        throw new AwsApiError(
          "InvalidSecurityGroupRuleId.NotFound",
          `The security group rule ID '${id}' does not exist`,
        );
      }
      found.push(r);
    }
    for (const want of selector.rules ?? []) {
      const r = [...this.securityGroupRules.values()].find(
        (x) =>
          x.groupId === groupId &&
          x.isEgress === isEgress &&
          x.ipProtocol === want.ipProtocol &&
          x.fromPort === want.fromPort &&
          x.toPort === want.toPort &&
          x.cidrIpv4 === want.cidrIpv4 &&
          x.referencedGroupId === want.referencedGroupId,
      );
      if (!r)
        throw new AwsApiError(
          "InvalidPermission.NotFound",
          "The specified rule does not exist in this security group.",
        );
      found.push(r);
    }
    for (const r of found) this.securityGroupRules.delete(r.id);
    return found;
  }

  public createNetworkInterface(input: {
    id?: string;
    description?: string;
    subnetId?: string;
    vpcId?: string;
    availabilityZone?: string;
    groups?: string[];
    requesterId?: string;
    requesterManaged?: boolean;
    status?: NetworkInterface["status"];
    attached?: boolean;
    instanceId?: string;
    /** Defaults from the description (`ELB net/…` → `network_load_balancer`, …), else `interface`. */
    interfaceType?: string;
    /** The attachment's device index (default 1: a secondary interface). */
    deviceIndex?: number;
    deleteOnTermination?: boolean;
    tags?: Tags;
    retainOnLoadBalancerDelete?: boolean;
    privateIpAddress?: string;
  }): NetworkInterface {
    for (const g of input.groups ?? []) this.requireGroup(g);
    const attached = input.attached ?? input.status === "in-use";
    const requesterManaged = input.requesterManaged ?? input.requesterId !== undefined;
    const description = input.description ?? "";
    const ip =
      input.privateIpAddress ??
      `10.0.${Math.floor(Number.parseInt(this.ids.hex(2), 16) / 2)}.${(Number.parseInt(this.ids.hex(2), 16) % 250) + 4}`;
    const eni: NetworkInterface = {
      id: input.id ?? this.ids.eniId(),
      description,
      subnetId: input.subnetId ?? "subnet-0a11aa11aa11aa11a",
      vpcId: input.vpcId ?? "vpc-0a1b2c3d4e5f60718",
      availabilityZone: input.availabilityZone ?? `${this.region}a`,
      groups: [...(input.groups ?? [])],
      ownerId: this.accountId,
      ...(input.requesterId !== undefined ? { requesterId: input.requesterId } : {}),
      requesterManaged,
      status: input.status ?? (attached ? "in-use" : "available"),
      interfaceType: input.interfaceType ?? interfaceTypeFor(description),
      privateIpAddress: ip,
      macAddress: `02:${this.ids.hex(2)}:${this.ids.hex(2)}:${this.ids.hex(2)}:${this.ids.hex(2)}:${this.ids.hex(2)}`,
      ...(attached
        ? {
            attachment: {
              // A service's attachment is `ela-attach-…` owned by amazon-aws; an instance's is `eni-attach-…`.
              id:
                requesterManaged && input.instanceId === undefined
                  ? this.ids.attachmentId()
                  : `eni-attach-0${this.ids.hex(16)}`,
              ...(input.instanceId !== undefined ? { instanceId: input.instanceId } : {}),
              instanceOwnerId:
                input.instanceId === undefined && requesterManaged
                  ? SERVICE_ATTACHMENT_OWNER
                  : this.accountId,
              deviceIndex: input.deviceIndex ?? 1,
              status: "attached" as const,
              attachTime: this.now(),
              ...(input.deleteOnTermination !== undefined
                ? { deleteOnTermination: input.deleteOnTermination }
                : {}),
            },
          }
        : {}),
      tags: { ...(input.tags ?? {}) },
      ...(input.retainOnLoadBalancerDelete !== undefined
        ? { retainOnLoadBalancerDelete: input.retainOnLoadBalancerDelete }
        : {}),
    };
    this.networkInterfaces.set(eni.id, eni);
    if (input.instanceId !== undefined && !this.instances.has(input.instanceId)) {
      // An interface attached to an instance the scenario never declared still implies that instance.
      this.instances.set(input.instanceId, {
        id: input.instanceId,
        vpcId: eni.vpcId,
        subnetId: eni.subnetId,
        availabilityZone: eni.availabilityZone,
      });
    }
    return eni;
  }

  public requireNetworkInterface(id: string): NetworkInterface {
    if (!/^eni-[0-9a-f]{8,17}$/.test(id)) {
      throw new AwsApiError(
        "InvalidNetworkInterfaceID.Malformed",
        `Invalid id: "${id}" (expecting "eni-...")`,
      );
    }
    const eni = this.networkInterfaces.get(id);
    if (!eni)
      throw new AwsApiError(
        "InvalidNetworkInterfaceID.NotFound",
        `The networkInterface ID '${id}' does not exist`,
      );
    return eni;
  }

  /** DeleteNetworkInterface: only a detached interface goes; AWS answers an attached one with InvalidParameterValue. */
  public deleteNetworkInterface(id: string): void {
    const eni = this.requireNetworkInterface(id);
    if (eni.attachment && eni.attachment.status !== "detached") {
      throw new AwsApiError("InvalidParameterValue", `Network interface '${id}' is currently in use.`);
    }
    this.networkInterfaces.delete(id);
    for (const vpce of this.vpcEndpoints.values()) {
      vpce.networkInterfaceIds = vpce.networkInterfaceIds.filter((e) => e !== id);
    }
  }

  /**
   * ModifyNetworkInterfaceAttribute with `SecurityGroupId.N`: the new set replaces the old one.
   * A requester-managed interface belongs to the service that made it; AWS refuses with AuthFailure
   * (change the groups through that service instead, e.g. ModifyVpcEndpoint).
   */
  public modifyNetworkInterfaceGroups(id: string, groups: string[]): NetworkInterface {
    const eni = this.requireNetworkInterface(id);
    if (groups.length === 0) throw new AwsApiError("InvalidParameterCombination", "No attributes specified.");
    for (const g of groups) this.requireGroup(g);
    if (eni.requesterManaged) {
      throw new AwsApiError("AuthFailure", "You do not have permission to access the specified resource.");
    }
    const unique = [...new Set(groups)];
    if (unique.length > 5) {
      throw new AwsApiError(
        "SecurityGroupsPerInterfaceLimitExceeded",
        "The maximum number of security groups per interface has been reached.",
      );
    }
    eni.groups = unique;
    return eni;
  }

  /** ModifyNetworkInterfaceAttribute with `SourceDestCheck.Value`. */
  public modifyNetworkInterfaceSourceDestCheck(id: string, value: boolean): NetworkInterface {
    const eni = this.requireNetworkInterface(id);
    if (eni.requesterManaged) {
      throw new AwsApiError("AuthFailure", "You do not have permission to access the specified resource.");
    }
    eni.sourceDestCheck = value;
    return eni;
  }

  /** ModifyNetworkInterfaceAttribute with `Description.Value`. */
  public modifyNetworkInterfaceDescription(id: string, description: string): NetworkInterface {
    const eni = this.requireNetworkInterface(id);
    if (eni.requesterManaged) {
      throw new AwsApiError("AuthFailure", "You do not have permission to access the specified resource.");
    }
    eni.description = description;
    return eni;
  }

  /** An instance for interfaces to attach to; its primary interface (device index 0) comes with it. */
  public createInstance(input: {
    id?: string;
    subnetId?: string;
    vpcId?: string;
    availabilityZone?: string;
    groups?: string[];
    primaryNetworkInterfaceId?: string;
  }): Ec2Instance {
    const instance: Ec2Instance = {
      id: input.id ?? `i-0${this.ids.hex(16)}`,
      vpcId: input.vpcId ?? "vpc-0a1b2c3d4e5f60718",
      subnetId: input.subnetId ?? "subnet-0a11aa11aa11aa11a",
      availabilityZone: input.availabilityZone ?? `${this.region}a`,
    };
    this.instances.set(instance.id, instance);
    this.createNetworkInterface({
      ...(input.primaryNetworkInterfaceId !== undefined ? { id: input.primaryNetworkInterfaceId } : {}),
      subnetId: instance.subnetId,
      vpcId: instance.vpcId,
      availabilityZone: instance.availabilityZone,
      groups: input.groups ?? [],
      status: "in-use",
      attached: true,
      instanceId: instance.id,
      deviceIndex: 0,
      deleteOnTermination: true,
    });
    return instance;
  }

  public requireInstance(id: string): Ec2Instance {
    if (!/^i-[0-9a-f]{8,17}$/.test(id)) {
      throw new AwsApiError("InvalidInstanceID.Malformed", `Invalid id: "${id}" (expecting "i-...")`);
    }
    const instance = this.instances.get(id);
    if (!instance)
      throw new AwsApiError("InvalidInstanceID.NotFound", `The instance ID '${id}' does not exist`);
    return instance;
  }

  /** AttachNetworkInterface: an `available` interface onto a free device index; returns the `eni-attach-…` id. */
  public attachNetworkInterface(id: string, instanceId: string, deviceIndex: number): string {
    const eni = this.requireNetworkInterface(id);
    const instance = this.requireInstance(instanceId);
    if (eni.attachment !== undefined || eni.status !== "available") {
      throw new AwsApiError("InvalidNetworkInterface.InUse", `Interface: [${id}] in use.`);
    }
    if (eni.availabilityZone !== instance.availabilityZone) {
      throw new AwsApiError(
        "InvalidParameterCombination",
        `You may not attach a network interface to an instance if they are not in the same availability zone`,
      );
    }
    const taken = [...this.networkInterfaces.values()].some(
      (e) => e.attachment?.instanceId === instanceId && e.attachment.deviceIndex === deviceIndex,
    );
    if (taken) {
      throw new AwsApiError(
        "InvalidParameterValue",
        `Instance '${instanceId}' already has an interface attached at device index '${deviceIndex}'.`,
      );
    }
    eni.attachment = {
      id: `eni-attach-0${this.ids.hex(16)}`,
      instanceId,
      instanceOwnerId: this.accountId,
      deviceIndex,
      status: "attached",
      attachTime: this.now(),
      deleteOnTermination: false,
    };
    eni.status = "in-use";
    return eni.attachment.id;
  }

  /** The interface an attachment id belongs to. */
  public networkInterfaceOfAttachment(attachmentId: string): NetworkInterface | undefined {
    return [...this.networkInterfaces.values()].find((e) => e.attachment?.id === attachmentId);
  }

  /**
   * DetachNetworkInterface by attachment id, as a customer may: a service's `ela-attach-…`
   * attachment and an instance's primary interface are refused with OperationNotPermitted.
   */
  public detachNetworkInterfaceAttachment(attachmentId: string): NetworkInterface {
    if (!/^(eni|ela)-attach-[0-9a-f]{8,17}$/.test(attachmentId)) {
      throw new AwsApiError(
        "InvalidAttachmentID.Malformed",
        `Invalid id: "${attachmentId}" (expecting "eni-attach-...")`,
      );
    }
    const eni = this.networkInterfaceOfAttachment(attachmentId);
    if (!eni?.attachment) {
      throw new AwsApiError(
        "InvalidAttachmentID.NotFound",
        `The attachment ID '${attachmentId}' does not exist`,
      );
    }
    if (attachmentId.startsWith("ela-attach-")) {
      throw new AwsApiError(
        "OperationNotPermitted",
        "You are not allowed to manage 'ela-attach' attachments.",
      );
    }
    if (eni.attachment.deviceIndex === 0) {
      throw new AwsApiError(
        "OperationNotPermitted",
        `The network interface at device index 0 cannot be detached.`,
      );
    }
    delete eni.attachment;
    eni.status = "available";
    return eni;
  }

  /** Detaches an ENI (what ELB eventually does after an ALB is deleted), leaving it `available`. */
  public detachNetworkInterface(id: string): void {
    const eni = this.networkInterfaces.get(id);
    if (!eni)
      throw new AwsApiError(
        "InvalidNetworkInterfaceID.NotFound",
        `The networkInterface ID '${id}' does not exist`,
      );
    delete eni.attachment;
    eni.status = "available";
  }

  // ---------------------------------------------------------------- VPC endpoints and Lambda (their ENIs)

  /**
   * An interface VPC endpoint and its ENIs (one per subnet), as PrivateLink creates them:
   * `VPC Endpoint Interface vpce-…`, interface type `vpc_endpoint`, requester-managed.
   */
  public createVpcEndpoint(input: {
    id?: string;
    serviceName: string;
    vpcId?: string;
    groups?: string[];
    subnets?: { subnetId: string; availabilityZone: string }[];
    privateDnsEnabled?: boolean;
    requesterId?: string;
    tags?: Tags;
    creationTimestamp?: Date;
  }): VpcEndpoint {
    const id = input.id ?? `vpce-0${this.ids.hex(16)}`;
    if (this.vpcEndpoints.has(id)) throw new Error(`VPC endpoint ${id} already exists`);
    const subnets = input.subnets ?? [
      { subnetId: "subnet-0a11aa11aa11aa11a", availabilityZone: `${this.region}a` },
      { subnetId: "subnet-0c33cc33cc33cc33c", availabilityZone: `${this.region}c` },
    ];
    const vpcId = input.vpcId ?? "vpc-0a1b2c3d4e5f60718";
    const groups = [...(input.groups ?? [])];
    for (const g of groups) this.requireGroup(g);
    const enis = subnets.map((s) =>
      this.createNetworkInterface({
        description: `VPC Endpoint Interface ${id}`,
        subnetId: s.subnetId,
        availabilityZone: s.availabilityZone,
        vpcId,
        groups,
        requesterId: input.requesterId ?? VPC_ENDPOINT_REQUESTER_ID,
        requesterManaged: true,
        interfaceType: "vpc_endpoint",
        status: "in-use",
        attached: true,
      }),
    );
    const vpce: VpcEndpoint = {
      id,
      type: "Interface",
      vpcId,
      serviceName: input.serviceName,
      state: "available",
      subnetIds: subnets.map((s) => s.subnetId),
      groups,
      networkInterfaceIds: enis.map((e) => e.id),
      privateDnsEnabled: input.privateDnsEnabled ?? true,
      creationTimestamp: input.creationTimestamp ?? this.now(),
      ownerId: this.accountId,
      tags: { ...(input.tags ?? {}) },
    };
    this.vpcEndpoints.set(id, vpce);
    return vpce;
  }

  public requireVpcEndpoint(id: string): VpcEndpoint {
    if (!/^vpce-[0-9a-f]{8,17}$/.test(id)) {
      throw new AwsApiError("InvalidVpcEndpointId.Malformed", `Invalid Id: '${id}' (expecting 'vpce-...')`);
    }
    const vpce = this.vpcEndpoints.get(id);
    if (!vpce) {
      throw new AwsApiError("InvalidVpcEndpointId.NotFound", `The Vpc Endpoint Id '${id}' does not exist`);
    }
    return vpce;
  }

  /**
   * ModifyVpcEndpoint's security-group part: removes then adds groups on the endpoint and on every
   * one of its ENIs, which is how a group held by an endpoint's ENIs is freed.
   */
  public modifyVpcEndpointGroups(id: string, change: { add?: string[]; remove?: string[] }): VpcEndpoint {
    const vpce = this.requireVpcEndpoint(id);
    for (const g of [...(change.add ?? []), ...(change.remove ?? [])]) this.requireGroup(g);
    const remove = new Set(change.remove ?? []);
    const next = [...new Set([...vpce.groups.filter((g) => !remove.has(g)), ...(change.add ?? [])])];
    if (next.length === 0) {
      // An interface endpoint always has a group; with none left it keeps the VPC's default one, as at creation.
      const fallback = [...this.securityGroups.values()].find(
        (g) => g.vpcId === vpce.vpcId && g.name === "default",
      );
      if (fallback) next.push(fallback.id);
    }
    vpce.groups = next;
    for (const eniId of vpce.networkInterfaceIds) {
      const eni = this.networkInterfaces.get(eniId);
      if (eni) eni.groups = [...next];
    }
    return vpce;
  }

  /**
   * The Hyperplane ENIs of a VPC-attached Lambda function (one per subnet and group set):
   * `AWS Lambda VPC ENI-<function>-<uuid>`, interface type `lambda`, requester-managed, in use.
   */
  public createLambdaFunctionEnis(input: {
    functionName: string;
    groups: string[];
    vpcId?: string;
    subnets?: { subnetId: string; availabilityZone: string }[];
    requesterId?: string;
  }): NetworkInterface[] {
    const subnets = input.subnets ?? [
      { subnetId: "subnet-0a11aa11aa11aa11a", availabilityZone: `${this.region}a` },
      { subnetId: "subnet-0c33cc33cc33cc33c", availabilityZone: `${this.region}c` },
    ];
    return subnets.map((s) =>
      this.createNetworkInterface({
        description: `AWS Lambda VPC ENI-${input.functionName}-${this.ids.uuid()}`,
        subnetId: s.subnetId,
        availabilityZone: s.availabilityZone,
        ...(input.vpcId !== undefined ? { vpcId: input.vpcId } : {}),
        groups: input.groups,
        requesterId: input.requesterId ?? `AROA${this.ids.upper(17)}:${input.functionName}`,
        requesterManaged: true,
        interfaceType: "lambda",
        status: "in-use",
        attached: true,
      }),
    );
  }

  // ---------------------------------------------------------------- Route 53

  public createHostedZone(input: {
    name: string;
    id?: string;
    comment?: string;
    privateZone?: boolean;
    callerReference?: string;
  }): HostedZone {
    const zone: HostedZone = {
      id: input.id ?? this.ids.hostedZoneId(),
      name: fqdn(input.name),
      callerReference: input.callerReference ?? this.ids.uuid(),
      ...(input.comment !== undefined ? { comment: input.comment } : {}),
      privateZone: input.privateZone ?? false,
      records: [],
    };
    const apex = zone.name;
    zone.records.push(
      {
        name: apex,
        type: "NS",
        ttl: 172800,
        values: [
          "ns-1536.awsdns-00.co.uk.",
          "ns-0.awsdns-00.com.",
          "ns-1024.awsdns-00.org.",
          "ns-512.awsdns-00.net.",
        ],
      },
      {
        name: apex,
        type: "SOA",
        ttl: 900,
        values: ["ns-1536.awsdns-00.co.uk. awsdns-hostmaster.amazon.com. 1 7200 900 1209600 86400"],
      },
    );
    this.hostedZones.set(zone.id, zone);
    return zone;
  }

  public requireZone(id: string): HostedZone {
    const zone = this.hostedZones.get(id.replace(/^\/hostedzone\//, ""));
    if (!zone) throw new AwsApiError("NoSuchHostedZone", `No hosted zone found with ID: ${id}`, 404);
    return zone;
  }

  /** The zone's records in Route 53's listing order. */
  public sortedRecords(zoneId: string): ResourceRecordSet[] {
    return [...this.requireZone(zoneId).records].sort((a, b) =>
      recordSortKey(a) < recordSortKey(b) ? -1 : recordSortKey(a) > recordSortKey(b) ? 1 : 0,
    );
  }

  /**
   * Applies a change batch all-or-nothing, with the messages Route 53 writes
   * (`Tried to delete resource record set [name='…', type='…'] but it was not found`, …).
   */
  public changeRecords(
    zoneId: string,
    changes: { action: string; record: ResourceRecordSet }[],
    comment?: string,
  ): Route53Change {
    const zone = this.requireZone(zoneId);
    if (changes.length === 0)
      throw new AwsApiError(
        "InvalidInput",
        "1 validation error detected: Value '[]' at 'changeBatch.changes' failed to satisfy constraint: Member must have length greater than or equal to 1",
      );
    const working = zone.records.map((r) => ({ ...r }));
    const errors: string[] = [];
    for (const { action, record: raw } of changes) {
      const record: ResourceRecordSet = {
        ...raw,
        name: fqdn(raw.name),
        ...(raw.aliasTarget
          ? { aliasTarget: { ...raw.aliasTarget, dnsName: fqdn(raw.aliasTarget.dnsName) } }
          : {}),
      };
      const label = `[name='${record.name}', type='${record.type}'${record.setIdentifier !== undefined ? `, set-identifier='${record.setIdentifier}'` : ""}]`;
      if (record.name !== zone.name && !record.name.endsWith(`.${zone.name}`)) {
        errors.push(`RRSet with DNS name ${record.name} is not permitted in zone ${zone.name}`);
        continue;
      }
      const idx = working.findIndex(
        (r) => r.name === record.name && r.type === record.type && r.setIdentifier === record.setIdentifier,
      );
      if (action === "CREATE" || action === "UPSERT") {
        if (action === "CREATE" && idx >= 0) {
          errors.push(`Tried to create resource record set ${label} but it already exists`);
          continue;
        }
        const aliasError = record.aliasTarget ? aliasTargetError(record.type, record.aliasTarget) : undefined;
        if (aliasError !== undefined) {
          errors.push(aliasError);
          continue;
        }
        const conflict = working.find(
          (r) =>
            r.name === record.name &&
            r.type !== record.type &&
            (r.type === "CNAME" || record.type === "CNAME"),
        );
        if (conflict) {
          errors.push(
            `RRSet of type ${record.type} with DNS name ${record.name} is not permitted because a conflicting RRSet of type ${conflict.type} with the same DNS name already exists in zone ${zone.name}`,
          );
          continue;
        }
        if (idx >= 0) working[idx] = record;
        else working.push(record);
      } else if (action === "DELETE") {
        const existing = idx >= 0 ? working[idx] : undefined;
        if (!existing) {
          errors.push(`Tried to delete resource record set ${label} but it was not found`);
        } else if (!sameRecord(existing, record)) {
          errors.push(
            `Tried to delete resource record set ${label} but the values provided do not match the current values`,
          );
        } else {
          working.splice(idx, 1);
        }
      } else {
        errors.push(`Invalid action ${action}`);
      }
    }
    if (errors.length > 0) throw new AwsApiError("InvalidChangeBatch", `[${errors.join(", ")}]`);
    zone.records = working;
    const change: Route53Change = {
      id: this.ids.changeId(),
      submittedAt: this.now(),
      ...(comment !== undefined ? { comment } : {}),
    };
    this.changes.set(change.id, change);
    return change;
  }

  public changeStatus(change: Route53Change): "PENDING" | "INSYNC" {
    return this.now().getTime() - change.submittedAt.getTime() >= this.route53SyncMs ? "INSYNC" : "PENDING";
  }

  public requireChange(id: string): Route53Change {
    const change = this.changes.get(id.replace(/^\/change\//, ""));
    if (!change)
      throw new AwsApiError(
        "NoSuchChange",
        `A change with the specified change ID does not exist: ${id}`,
        404,
      );
    return change;
  }

  // ---------------------------------------------------------------- CloudFront

  /** Builds a complete, valid DistributionConfig (what the console would create) from a few facts. */
  public buildDistributionConfig(input: {
    aliases?: string[];
    origins: { id: string; domainName: string }[];
    /** Failover groups: the first member is the primary, the second the one CloudFront fails over to. */
    originGroups?: { id: string; members: string[]; failoverStatusCodes?: number[] }[];
    /** The default behaviour's target: an origin or an origin group id (default: the first origin). */
    defaultOriginId?: string;
    /** Cache behaviours in precedence order, each targeting an origin or an origin group. */
    cacheBehaviors?: { pathPattern: string; targetOriginId: string }[];
    comment?: string;
    enabled?: boolean;
    callerReference?: string;
  }): XmlNode {
    const aliases = input.aliases ?? [];
    const groups = input.originGroups ?? [];
    const behaviors = input.cacheBehaviors ?? [];
    const methods = (names: string[]): XmlNode[] => [
      el("Quantity", names.length),
      el("Items", ...names.map((m) => el("Method", m))),
    ];
    // A behaviour whose target is an origin group may only allow GET, HEAD and OPTIONS (CloudFront
    // fails over for those methods only and refuses the others on such a behaviour).
    const behaviorBody = (target: string): XmlNode[] => {
      const toGroup = groups.some((g) => g.id === target);
      return [
        el("TargetOriginId", target),
        el("TrustedSigners", el("Enabled", false), el("Quantity", 0)),
        el("TrustedKeyGroups", el("Enabled", false), el("Quantity", 0)),
        el("ViewerProtocolPolicy", "redirect-to-https"),
        el(
          "AllowedMethods",
          ...methods(
            toGroup
              ? ["HEAD", "GET", "OPTIONS"]
              : ["HEAD", "DELETE", "POST", "GET", "OPTIONS", "PUT", "PATCH"],
          ),
          el("CachedMethods", ...methods(["HEAD", "GET"])),
        ),
        el("SmoothStreaming", false),
        el("Compress", true),
        el("LambdaFunctionAssociations", el("Quantity", 0)),
        el("FunctionAssociations", el("Quantity", 0)),
        el("FieldLevelEncryptionId", ""),
        el("CachePolicyId", "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"),
        el("OriginRequestPolicyId", "216adef6-5c7f-47e4-b989-5492eafa07d3"),
      ];
    };
    return el(
      "DistributionConfig",
      el("CallerReference", input.callerReference ?? this.ids.uuid()),
      el(
        "Aliases",
        el("Quantity", aliases.length),
        aliases.length > 0 ? el("Items", ...aliases.map((a) => el("CNAME", a))) : undefined,
      ),
      el("DefaultRootObject", ""),
      el(
        "Origins",
        el("Quantity", input.origins.length),
        el(
          "Items",
          ...input.origins.map((o) =>
            el(
              "Origin",
              el("Id", o.id),
              el("DomainName", o.domainName),
              el("OriginPath", ""),
              el("CustomHeaders", el("Quantity", 0)),
              el(
                "CustomOriginConfig",
                el("HTTPPort", 80),
                el("HTTPSPort", 443),
                el("OriginProtocolPolicy", "https-only"),
                el("OriginSslProtocols", el("Quantity", 1), el("Items", el("SslProtocol", "TLSv1.2"))),
                el("OriginReadTimeout", 30),
                el("OriginKeepaliveTimeout", 5),
              ),
              el("ConnectionAttempts", 3),
              el("ConnectionTimeout", 10),
              el("OriginShield", el("Enabled", false)),
              el("OriginAccessControlId", ""),
            ),
          ),
        ),
      ),
      el(
        "OriginGroups",
        el("Quantity", groups.length),
        groups.length > 0
          ? el(
              "Items",
              ...groups.map((g) => {
                const codes = g.failoverStatusCodes ?? [500, 502, 503, 504];
                return el(
                  "OriginGroup",
                  el("Id", g.id),
                  el(
                    "FailoverCriteria",
                    el(
                      "StatusCodes",
                      el("Quantity", codes.length),
                      el("Items", ...codes.map((c) => el("StatusCode", c))),
                    ),
                  ),
                  el(
                    "Members",
                    el("Quantity", g.members.length),
                    el("Items", ...g.members.map((m) => el("OriginGroupMember", el("OriginId", m)))),
                  ),
                );
              }),
            )
          : undefined,
      ),
      el("DefaultCacheBehavior", ...behaviorBody(input.defaultOriginId ?? input.origins[0]?.id ?? "")),
      el(
        "CacheBehaviors",
        el("Quantity", behaviors.length),
        behaviors.length > 0
          ? el(
              "Items",
              ...behaviors.map((b) =>
                el("CacheBehavior", el("PathPattern", b.pathPattern), ...behaviorBody(b.targetOriginId)),
              ),
            )
          : undefined,
      ),
      el("CustomErrorResponses", el("Quantity", 0)),
      el("Comment", input.comment ?? ""),
      el("Logging", el("Enabled", false), el("IncludeCookies", false), el("Bucket", ""), el("Prefix", "")),
      el("PriceClass", "PriceClass_All"),
      el("Enabled", input.enabled ?? true),
      el(
        "ViewerCertificate",
        el("CloudFrontDefaultCertificate", false),
        el("ACMCertificateArn", `arn:aws:acm:us-east-1:${this.accountId}:certificate/${this.ids.uuid()}`),
        el("SSLSupportMethod", "sni-only"),
        el("MinimumProtocolVersion", "TLSv1.2_2021"),
        el("CertificateSource", "acm"),
      ),
      el("Restrictions", el("GeoRestriction", el("RestrictionType", "none"), el("Quantity", 0))),
      el("WebACLId", ""),
      el("HttpVersion", "http2"),
      el("IsIPV6Enabled", true),
      el("ContinuousDeploymentPolicyId", ""),
      el("Staging", false),
    );
  }

  public createDistribution(input: {
    id?: string;
    domainName?: string;
    etag?: string;
    config: XmlNode;
    deployed?: boolean;
    lastModifiedTime?: Date;
  }): Distribution {
    validateDistributionConfig(input.config);
    const id = input.id ?? this.ids.distributionId();
    const at = input.lastModifiedTime ?? this.now();
    const dist: Distribution = {
      id,
      arn: `arn:aws:cloudfront::${this.accountId}:distribution/${id}`,
      domainName:
        input.domainName ?? `d${this.ids.chars("abcdefghijklmnopqrstuvwxyz0123456789", 13)}.cloudfront.net`,
      etag: input.etag ?? this.ids.etag(),
      lastModifiedTime: at,
      config: input.config,
      deployedAt: input.deployed === false ? new Date(this.now().getTime() + this.cloudFrontDeployMs) : at,
    };
    this.distributions.set(id, dist);
    return dist;
  }

  public requireDistribution(id: string): Distribution {
    const d = this.distributions.get(id);
    if (!d) throw new AwsApiError("NoSuchDistribution", "The specified distribution does not exist.", 404);
    return d;
  }

  public distributionStatus(d: Distribution): "InProgress" | "Deployed" {
    return this.now().getTime() >= d.deployedAt.getTime() ? "Deployed" : "InProgress";
  }

  /** The config viewers are served from now: the new one once Deployed, the previous one before. */
  public servingConfig(d: Distribution): XmlNode {
    return this.distributionStatus(d) === "Deployed" ? d.config : (d.liveConfig ?? d.config);
  }

  /** The origins of a distribution as plain data (the traffic tracer's view). */
  public distributionOrigins(d: Distribution): { id: string; domainName: string }[] {
    return (child(child(d.config, "Origins"), "Items")?.children ?? []).map((o) => ({
      id: childText(o, "Id") ?? "",
      domainName: childText(o, "DomainName") ?? "",
    }));
  }

  /**
   * The origins CloudFront would try for a request path under this config: the first cache
   * behaviour whose path pattern matches (in order), else the default one; its target is one
   * origin, or an origin group's members in failover order (primary first).
   */
  public originsForPath(config: XmlNode, path: string): { id: string; domainName: string }[] {
    const behavior =
      items(child(config, "CacheBehaviors")).find((b) =>
        pathPatternMatches(childText(b, "PathPattern") ?? "", path),
      ) ?? child(config, "DefaultCacheBehavior");
    const target = childText(behavior, "TargetOriginId") ?? "";
    const origins = items(child(config, "Origins"));
    const group = items(child(config, "OriginGroups")).find((g) => childText(g, "Id") === target);
    const ids = group ? items(child(group, "Members")).map((m) => childText(m, "OriginId") ?? "") : [target];
    return ids.flatMap((id) => {
      const o = origins.find((x) => childText(x, "Id") === id);
      return o ? [{ id, domainName: childText(o, "DomainName") ?? "" }] : [];
    });
  }

  /** UpdateDistribution: If-Match guard, whole-config replacement, new ETag, back to InProgress. */
  public updateDistribution(id: string, ifMatch: string | undefined, config: XmlNode): Distribution {
    const d = this.requireDistribution(id);
    if (ifMatch === undefined || ifMatch === "") {
      throw new AwsApiError(
        "InvalidIfMatchVersion",
        "The If-Match version is missing or not valid for the resource.",
      );
    }
    if (ifMatch !== d.etag) {
      throw new AwsApiError(
        "PreconditionFailed",
        "The request failed because it didn't meet the preconditions in one or more request-header fields.",
        412,
      );
    }
    if (childText(config, "CallerReference") !== childText(d.config, "CallerReference")) {
      throw new AwsApiError("IllegalUpdate", "The update contains modifications that are not allowed.");
    }
    validateDistributionConfig(config);
    // Two updates in a row while InProgress: the edges still serve the last *deployed* config.
    d.liveConfig = this.distributionStatus(d) === "Deployed" ? d.config : (d.liveConfig ?? d.config);
    d.config = config;
    d.etag = this.ids.etag();
    d.lastModifiedTime = this.now();
    d.deployedAt = new Date(this.now().getTime() + this.cloudFrontDeployMs);
    return d;
  }
}

/** The `Items` children of a CloudFront list wrapper (`<X><Quantity/><Items>…</Items></X>`). */
function items(node: XmlNode | undefined): XmlNode[] {
  return child(node, "Items")?.children ?? [];
}

/**
 * CloudFront's path-pattern match: `*` any run of characters, `?` exactly one, case-sensitive,
 * the leading `/` optional in the pattern.
 */
export function pathPatternMatches(pattern: string, path: string): boolean {
  const p = pattern.startsWith("/") || pattern === "*" ? pattern : `/${pattern}`;
  const re = p
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${re}$`).test(path);
}

/**
 * What CloudFront checks in a DistributionConfig's origin references before accepting it: every
 * behaviour targets an origin or an origin group that exists (NoSuchOrigin), every origin group has
 * exactly two members that are origins of the distribution, and a behaviour that targets an origin
 * group allows only GET, HEAD and OPTIONS (InvalidArgument).
 */
export function validateDistributionConfig(config: XmlNode): void {
  const originIds = items(child(config, "Origins")).map((o) => childText(o, "Id") ?? "");
  const groups = items(child(config, "OriginGroups"));
  const groupIds = groups.map((g) => childText(g, "Id") ?? "");
  const noSuchOrigin = (): AwsApiError =>
    new AwsApiError("NoSuchOrigin", "One or more of your origins or origin groups do not exist.", 404);
  for (const g of groups) {
    const id = childText(g, "Id") ?? "";
    const members = items(child(g, "Members")).map((m) => childText(m, "OriginId") ?? "");
    if (members.length !== 2) {
      throw new AwsApiError(
        "InvalidArgument",
        `The origin group ${id} must have exactly 2 members, a primary and a secondary origin; it has ${members.length}.`,
      );
    }
    if (members.some((m) => !originIds.includes(m))) throw noSuchOrigin();
    if (items(child(child(g, "FailoverCriteria"), "StatusCodes")).length === 0) {
      throw new AwsApiError(
        "InvalidArgument",
        `The origin group ${id} must have at least one failover status code.`,
      );
    }
  }
  const behaviors = [child(config, "DefaultCacheBehavior"), ...items(child(config, "CacheBehaviors"))];
  for (const b of behaviors) {
    const target = childText(b, "TargetOriginId");
    if (target === undefined || (!originIds.includes(target) && !groupIds.includes(target))) {
      throw noSuchOrigin();
    }
    if (groupIds.includes(target)) {
      const allowed = items(child(b, "AllowedMethods")).map((m) => m.text);
      if (allowed.some((m) => !["GET", "HEAD", "OPTIONS"].includes(m))) {
        throw new AwsApiError(
          "InvalidArgument",
          "The parameter AllowedMethods cannot include POST, PUT, PATCH, or DELETE for a cached behavior associated with an origin group.",
        );
      }
    }
  }
}
