/**
 * The one place AWS SDK v3 clients are built. Everything the clients need comes from the caller
 * (which got it from config), never from `process.env`, so tests can point every client at the
 * simulator and production can point them at AWS with the same code.
 *
 * Credentials per account: the base credentials (static keys, a profile, or the SDK's default
 * chain: IRSA / Pod Identity in the cluster) assume the cluster's role (`roleArn`), and those the
 * edge role (`edge.roleArn`), through the SDK's own `fromTemporaryCredentials`. The regional
 * clients (ELBv2, EC2, tagging, CloudTrail) sign as the cluster's account; Route 53 and CloudFront
 * as the edge account when one is configured, else as the cluster's.
 */
import { CloudFrontClient } from "@aws-sdk/client-cloudfront";
import { CloudTrailClient } from "@aws-sdk/client-cloudtrail";
import { EC2Client } from "@aws-sdk/client-ec2";
import { ElasticLoadBalancingV2Client } from "@aws-sdk/client-elastic-load-balancing-v2";
import { ResourceGroupsTaggingAPIClient } from "@aws-sdk/client-resource-groups-tagging-api";
import { Route53Client } from "@aws-sdk/client-route-53";
import { fromNodeProviderChain, fromTemporaryCredentials } from "@aws-sdk/credential-providers";
import { AWS_ACCOUNT, AssumeRoleFailed, accountOfRole, type AwsAccountRef } from "./sdk-calls.js";
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
  /** The cluster's account: this role is assumed with the base credentials (static, profile or default chain). */
  readonly roleArn?: string;
  /** `sts:ExternalId` the cluster role's trust policy asks for. */
  readonly externalId?: string;
  /**
   * The account holding Route 53 and CloudFront: its role is assumed with the cluster's credentials
   * (after `roleArn` when set). Absent = Route 53 and CloudFront sign as the cluster's account.
   */
  readonly edge?: AwsAssumedRole;
  /** `RoleSessionName` of every role assumed (default `unstuck`): what CloudTrail shows. */
  readonly sessionName?: string;
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

/** A role to assume, and the external id its trust policy asks for. */
export interface AwsAssumedRole {
  readonly roleArn: string;
  readonly externalId?: string;
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

/** Credentials as the SDK resolves them: what `fromTemporaryCredentials` answers. */
interface ResolvedCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
  readonly expiration?: Date;
}

/** A credential provider as SDK clients and `fromTemporaryCredentials` take it. */
type CredentialProvider = (properties?: Record<string, unknown>) => Promise<ResolvedCredentials>;

/** Assumed credentials are renewed this long before they expire. */
const RENEW_BEFORE_MS = 5 * 60_000;

/**
 * One provider shared by every client of an account: each SDK client memoizes its credentials on
 * its own, so without this the four regional clients would each assume the same role. A failure is
 * not kept (the next call tries again); credentials are renewed before they expire.
 */
function shared(provider: CredentialProvider, now: () => number = Date.now): CredentialProvider {
  let current: Promise<ResolvedCredentials> | undefined;
  return async (properties) => {
    const held = current;
    if (held !== undefined) {
      const creds = await held.catch(() => undefined);
      if (
        creds !== undefined &&
        (creds.expiration === undefined || creds.expiration.getTime() - now() > RENEW_BEFORE_MS)
      )
        return creds;
      if (current === held) current = undefined;
    }
    current ??= provider(properties);
    const attempt = current;
    try {
      return await attempt;
    } catch (err) {
      if (current === attempt) current = undefined;
      throw err;
    }
  };
}

/** What signs each account's calls: the provider (absent = the SDK's default chain) and its name. */
interface AccountCredentials {
  readonly provider?: CredentialProvider;
  readonly ref: AwsAccountRef;
}

/**
 * The credentials of the cluster's account and of the edge account. Each role is assumed through
 * `fromTemporaryCredentials` with the credentials before it in the chain (the pod's default chain,
 * a profile, or static keys → the cluster role → the edge role), its STS client at the same
 * endpoint, region and bounds as the other clients.
 */
function accountCredentials(
  options: AwsClientOptions,
  stsConfig: Record<string, unknown>,
): { cluster: AccountCredentials; edge: AccountCredentials } {
  const sessionName = options.sessionName ?? "unstuck";
  const base: CredentialProvider | undefined =
    options.credentials !== undefined
      ? (() => {
          const keys = { ...options.credentials };
          return () => Promise.resolve(keys);
        })()
      : options.roleArn !== undefined || options.edge !== undefined
        ? fromNodeProviderChain(options.profile !== undefined ? { profile: options.profile } : {})
        : undefined;
  const baseRef: AwsAccountRef = { label: "the bot's own AWS credentials" };
  const assume = (role: AwsAssumedRole, label: string, before: AccountCredentials): AccountCredentials => {
    const account = accountOfRole(role.roleArn);
    const ref: AwsAccountRef = {
      ...(account !== undefined ? { account } : {}),
      role: role.roleArn,
      label: `${label}${account !== undefined ? ` ${account}` : ""} (role ${role.roleArn})`,
    };
    const provider = fromTemporaryCredentials({
      params: {
        RoleArn: role.roleArn,
        RoleSessionName: sessionName,
        ...(role.externalId !== undefined ? { ExternalId: role.externalId } : {}),
      },
      ...(before.provider !== undefined ? { masterCredentials: before.provider } : {}),
      clientConfig: stsConfig,
    }) as CredentialProvider;
    return {
      ref,
      provider: shared(async (properties) => {
        try {
          return await provider(properties);
        } catch (err) {
          throw AssumeRoleFailed.wrap(err, ref, before.ref);
        }
      }),
    };
  };
  const bot: AccountCredentials = { ...(base !== undefined ? { provider: base } : {}), ref: baseRef };
  const cluster =
    options.roleArn !== undefined
      ? assume(
          {
            roleArn: options.roleArn,
            ...(options.externalId !== undefined ? { externalId: options.externalId } : {}),
          },
          "the cluster's account",
          bot,
        )
      : bot;
  const edge = options.edge !== undefined ? assume(options.edge, "the edge account", cluster) : cluster;
  return { cluster, edge };
}

/** Builds all clients with the same endpoint and retry policy, each with its account's credentials. */
export function createAwsClients(options: AwsClientOptions): AwsClients {
  const assumes = options.roleArn !== undefined || options.edge !== undefined;
  const common = {
    ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
    // With a role to assume, the profile is the chain's first link (below), not the clients'.
    ...(options.credentials === undefined && options.profile !== undefined && !assumes
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
  // STS answers in the cluster's region (regional endpoint), at the same endpoint as every client.
  const { cluster, edge } = accountCredentials(options, { ...withHandler, region: options.region });
  const signedAs = (account: AccountCredentials) =>
    !assumes
      ? options.credentials !== undefined
        ? { credentials: { ...options.credentials } }
        : {}
      : account.provider !== undefined
        ? { credentials: account.provider }
        : {};
  const regional = { ...withHandler, ...signedAs(cluster), region: options.region };
  const global = { ...withHandler, ...signedAs(edge), region: GLOBAL_SIGNING_REGION };
  const client = <C extends MiddlewareClient>(c: C, service: string, account: AccountCredentials): C =>
    withAccount(withCallMetrics(withCallDeadline(c, timeoutMs), service), account.ref, assumes);
  return {
    elbv2: client(new ElasticLoadBalancingV2Client(regional), "elbv2", cluster),
    ec2: client(new EC2Client(regional), "ec2", cluster),
    route53: client(new Route53Client(global), "route53", edge),
    cloudfront: client(new CloudFrontClient(global), "cloudfront", edge),
    cloudtrail: client(new CloudTrailClient(regional), "cloudtrail", cluster),
    tagging: client(new ResourceGroupsTaggingAPIClient(regional), "tagging", cluster),
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

/**
 * Names the account (and role) a refused call was signed as: the error carries it to the adapter's
 * mapping (`sdk-calls.ts`), so "missing permission" says in which account. Only when a role is
 * assumed: with one set of credentials there is one account and the messages stay as they were.
 */
function withAccount<C extends MiddlewareClient>(client: C, ref: AwsAccountRef, assumes: boolean): C {
  if (!assumes) return client;
  return addOutermost(client, "unstuckAccount", (next) => async (args) => {
    try {
      return await next(args);
    } catch (err) {
      if (err !== null && typeof err === "object" && !(AWS_ACCOUNT in err)) {
        Object.defineProperty(err, AWS_ACCOUNT, { value: ref, enumerable: false });
      }
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
