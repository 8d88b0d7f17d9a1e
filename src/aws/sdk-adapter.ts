/**
 * `AwsPort` over the AWS SDK v3 clients: the service adapters (`elbv2.ts`, `ec2.ts`, `route53.ts`,
 * `cloudfront.ts`, `cloudtrail.ts`, `tagging.ts`) composed into the one port the wiring hands out.
 * Each does I/O and error mapping only (`sdk-calls.ts`).
 */
import type { CloudFrontClient } from "@aws-sdk/client-cloudfront";
import type { CloudTrailClient } from "@aws-sdk/client-cloudtrail";
import type { EC2Client } from "@aws-sdk/client-ec2";
import type { ElasticLoadBalancingV2Client } from "@aws-sdk/client-elastic-load-balancing-v2";
import type { ResourceGroupsTaggingAPIClient } from "@aws-sdk/client-resource-groups-tagging-api";
import type { Route53Client } from "@aws-sdk/client-route-53";
import { createCloudFrontAdapter } from "./cloudfront.js";
import { createCloudTrailAdapter } from "./cloudtrail.js";
import { createEc2Adapter } from "./ec2.js";
import { createLoadBalancingAdapter } from "./elbv2.js";
import type { AwsPort } from "./port.js";
import { createRoute53Adapter } from "./route53.js";
import { createTaggingAdapter } from "./tagging.js";

// For the wiring's start-up check (and tests): the error mapping every adapter uses, the EC2 probe.
export { mapAwsError } from "./sdk-calls.js";
export { probeEc2 } from "./ec2.js";

/** The SDK clients {@link createAwsAdapter} reads through (a subset of `AwsClients`). */
export interface AwsDiagnosisClients {
  readonly elbv2: ElasticLoadBalancingV2Client;
  readonly ec2: EC2Client;
  readonly cloudtrail: CloudTrailClient;
  /** Resource Groups Tagging API, for `resourcesByTags`. */
  readonly tagging: ResourceGroupsTaggingAPIClient;
  /** For the traffic path (`trace`); absent → those reads fail with a clear error. */
  readonly route53?: Route53Client;
  readonly cloudfront?: CloudFrontClient;
}

export function createAwsAdapter(clients: AwsDiagnosisClients): AwsPort {
  const tagging = createTaggingAdapter(clients.tagging);
  return {
    ...createLoadBalancingAdapter(clients.elbv2, tagging),
    ...createEc2Adapter(clients.ec2),
    ...createCloudTrailAdapter(clients.cloudtrail),
    ...tagging,
    ...createRoute53Adapter(clients.route53),
    ...createCloudFrontAdapter(clients.cloudfront),
  };
}
