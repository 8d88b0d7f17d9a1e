/**
 * The one place AWS SDK v3 clients are built. Everything the clients need comes from the caller
 * (which got it from config), never from `process.env`, so tests can point every client at the
 * simulator and production can point them at AWS with the same code.
 */
import { CloudFrontClient } from "@aws-sdk/client-cloudfront";
import { CloudTrailClient } from "@aws-sdk/client-cloudtrail";
import { EC2Client } from "@aws-sdk/client-ec2";
import { ElasticLoadBalancingV2Client } from "@aws-sdk/client-elastic-load-balancing-v2";
import { ResourceGroupsTaggingAPIClient } from "@aws-sdk/client-resource-groups-tagging-api";
import { Route53Client } from "@aws-sdk/client-route-53";

/** Static credentials; omit to use the SDK's default chain (IRSA / Pod Identity in the cluster). */
export interface AwsStaticCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

/** Options for {@link createAwsClients}. */
export interface AwsClientOptions {
  /** Region of the cluster's load balancers, security groups and CloudTrail. */
  readonly region: string;
  /** One endpoint for every service (the simulator, LocalStack); unset means the real AWS endpoints. */
  readonly endpoint?: string;
  readonly credentials?: AwsStaticCredentials;
  /** A shared-config profile name, used only when `credentials` is not given. */
  readonly profile?: string;
  /** Total attempts per call including the first (SDK default 3). */
  readonly maxAttempts?: number;
  /** `standard` retries with backoff; `adaptive` also rate-limits the client after throttling. */
  readonly retryMode?: "standard" | "adaptive";
}

/** The SDK clients the adapters in `src/aws` use. */
export interface AwsClients {
  readonly elbv2: ElasticLoadBalancingV2Client;
  readonly ec2: EC2Client;
  readonly route53: Route53Client;
  readonly cloudfront: CloudFrontClient;
  readonly cloudtrail: CloudTrailClient;
  /** Resource Groups Tagging API (regional): the stack's ELB resources by tag in one paged call. */
  readonly tagging: ResourceGroupsTaggingAPIClient;
}

/** Route 53 and CloudFront are global services signed for us-east-1 whatever the cluster region. */
export const GLOBAL_SIGNING_REGION = "us-east-1";

/** Builds all clients with the same endpoint, credentials and retry policy. */
export function createAwsClients(options: AwsClientOptions): AwsClients {
  const common = {
    ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
    ...(options.credentials !== undefined
      ? { credentials: { ...options.credentials } }
      : options.profile !== undefined
        ? { profile: options.profile }
        : {}),
    ...(options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {}),
    ...(options.retryMode !== undefined ? { retryMode: options.retryMode } : {}),
  };
  const regional = { ...common, region: options.region };
  const global = { ...common, region: GLOBAL_SIGNING_REGION };
  return {
    elbv2: new ElasticLoadBalancingV2Client(regional),
    ec2: new EC2Client(regional),
    route53: new Route53Client(global),
    cloudfront: new CloudFrontClient(global),
    cloudtrail: new CloudTrailClient(regional),
    tagging: new ResourceGroupsTaggingAPIClient(regional),
  };
}

/** Releases the clients' sockets (for graceful shutdown and tests). */
export function destroyAwsClients(clients: AwsClients): void {
  clients.elbv2.destroy();
  clients.ec2.destroy();
  clients.route53.destroy();
  clients.cloudfront.destroy();
  clients.cloudtrail.destroy();
  clients.tagging.destroy();
}
