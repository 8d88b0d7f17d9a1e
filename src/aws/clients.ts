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
import { metricSink } from "../ops/metric-sink.js";
import { withTimeout } from "../util/deadline.js";

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
  /**
   * Longest wait for one call, retries included (default 10 s). Each attempt's socket is also cut
   * after this long, so an endpoint that accepts and never answers cannot hold a diagnosis.
   */
  readonly timeoutMs?: number;
}

/** Default bound on one AWS call, retries included. */
export const DEFAULT_AWS_TIMEOUT_MS = 10_000;

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
  const timeoutMs = options.timeoutMs ?? DEFAULT_AWS_TIMEOUT_MS;
  // The SDK builds its NodeHttpHandler from these options: the socket-level bounds per attempt.
  const withHandler = {
    ...common,
    requestHandler: { connectionTimeout: Math.min(timeoutMs, 5_000), requestTimeout: timeoutMs },
  };
  const regional = { ...withHandler, region: options.region };
  const global = { ...withHandler, region: GLOBAL_SIGNING_REGION };
  const client = <C extends MiddlewareClient>(c: C, service: string): C =>
    withCallMetrics(withCallDeadline(c, timeoutMs), service);
  return {
    elbv2: client(new ElasticLoadBalancingV2Client(regional), "elbv2"),
    ec2: client(new EC2Client(regional), "ec2"),
    route53: client(new Route53Client(global), "route53"),
    cloudfront: client(new CloudFrontClient(global), "cloudfront"),
    cloudtrail: client(new CloudTrailClient(regional), "cloudtrail"),
    tagging: client(new ResourceGroupsTaggingAPIClient(regional), "tagging"),
  };
}

/** What a deadline failure looks like to the adapter's error mapping (`err.name`). */
export class AwsCallTimeoutError extends Error {
  public constructor(
    public readonly operation: string,
    public readonly timeoutMs: number,
  ) {
    super(`no answer within ${Number((timeoutMs / 1000).toFixed(1))} s (${operation})`);
    this.name = "TimeoutError";
  }
}

type MiddlewareClient = { middlewareStack: { add: (...args: never[]) => void } };
type InitializeMiddleware = (
  next: (args: unknown) => Promise<unknown>,
  context: { commandName?: string },
) => (args: unknown) => Promise<unknown>;

/** Adds `mw` at the outermost step (initialize, high priority): around retries and backoff. */
function addOutermost<C extends MiddlewareClient>(client: C, name: string, mw: InitializeMiddleware): C {
  const stack = client.middlewareStack as unknown as {
    add: (mw: InitializeMiddleware, options: { step: "initialize"; name: string; priority: "high" }) => void;
  };
  stack.add(mw, { step: "initialize", name, priority: "high" });
  return client;
}

/**
 * The per-attempt socket timeout alone would let retries multiply the wait (5 attempts × 10 s);
 * this middleware bounds the whole call, retries and backoff included. It sits at the outermost
 * step, so the caller's promise settles on time even if a retry is still in flight underneath.
 */
function withCallDeadline<C extends MiddlewareClient>(client: C, timeoutMs: number): C {
  return addOutermost(
    client,
    "unstuckCallDeadline",
    (next, context) => (args) =>
      withTimeout(
        next(args),
        timeoutMs,
        () => new AwsCallTimeoutError(context.commandName ?? "call", timeoutMs),
      ),
  );
}

/**
 * One count per SDK command (its retries and the deadline included: outside both), by service,
 * operation and code — `OK`, or the error's name (`AccessDenied`, `Throttling`, `TimeoutError`…) —
 * and one error count per failed command, for `/metrics`.
 */
function withCallMetrics<C extends MiddlewareClient>(client: C, service: string): C {
  return addOutermost(client, "unstuckCallMetrics", (next, context) => async (args) => {
    try {
      const out = await next(args);
      metricSink()?.cloudCall(service, context.commandName);
      return out;
    } catch (err) {
      metricSink()?.cloudCall(service, context.commandName, (err as { name?: string } | null)?.name ?? "");
      throw err;
    }
  });
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
