/**
 * The single HTTP endpoint: routes each request to a service by its protocol, applies faults,
 * counts calls and keeps the CloudTrail record of mutating calls. Signatures are read (for the
 * access key and region) but never verified. The access key id picks the account that answers
 * (`accounts.ts`): STS's temporary keys belong to the assumed role's account, other keys to the
 * main world unless registered to another account.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { AwsAccounts } from "./accounts.js";
import { AwsApiError } from "./errors.js";
import { parseForm, type ServiceRequest, type ServiceResult, type TrailInfo } from "./protocols/common.js";
import {
  cloudFrontAction,
  cloudFrontErrorBody,
  cloudFrontTrail,
  handleCloudFront,
} from "./protocols/cloudfront.js";
import { cloudTrailErrorBody, handleCloudTrail } from "./protocols/cloudtrail.js";
import { ec2ErrorBody, ec2Trail, handleEc2 } from "./protocols/ec2.js";
import { elbErrorBody, elbTrail, handleElbv2 } from "./protocols/elbv2.js";
import { handleRoute53, route53Action, route53ErrorBody, route53Trail } from "./protocols/route53.js";
import { handleSts, stsErrorBody } from "./protocols/sts.js";
import { handleTagging, taggingErrorBody } from "./protocols/tagging.js";
import type { AwsWorld } from "./world.js";

/** Short service names used in `calls()` and in fault settings. */
export const AwsService = {
  Elbv2: "elbv2",
  Ec2: "ec2",
  Route53: "route53",
  CloudFront: "cloudfront",
  CloudTrail: "cloudtrail",
  Tagging: "tagging",
  Sts: "sts",
} as const;
export type AwsService = (typeof AwsService)[keyof typeof AwsService];

/** Faults the simulator injects; settable at start and at run time. */
export interface AwsFaults {
  /** Added to every response. */
  latencyMs?: number;
  /** Probability (0–1) that a call fails with the service's 5xx. */
  errorRate?: number;
  /** Enforce ELB's real token bucket (40 burst, 10 per second refill) on ELBv2 calls. */
  elbThrottleBucket?: boolean;
  /** Throttle the next `count` calls (of `service`, or of any service). */
  throttle?: { service?: string; count: number };
  /**
   * IAM actions the caller's role may not call, as an operation name (`DescribeNetworkInterfaces`,
   * any service) or in IAM form (`ec2:DescribeNetworkInterfaces`). Each is answered with the
   * service's own access-denied error, so the product's "missing permission" path can be tested.
   */
  deny?: readonly string[];
  /**
   * Actions (same two forms as `deny`) that are accepted and never answered, until the client gives
   * up or the simulator stops: an endpoint that hangs, for the product's timeouts.
   */
  hang?: readonly string[];
}

/** One counted call. */
export interface AwsCall {
  service: string;
  action: string;
  status: number;
  errorCode?: string;
  /** The account that answered and the key the call was signed with: once the simulator has accounts or roles. */
  account?: string;
  accessKeyId?: string;
}

/** Who signed a request: its access key id, and the accounts that decide whose world answers. */
export interface Caller {
  readonly accessKeyId: string;
  readonly accounts: AwsAccounts;
}

interface ServiceDef {
  readonly handle: (world: AwsWorld, req: ServiceRequest, caller: Caller) => ServiceResult;
  readonly errorBody: (err: AwsApiError, requestId: string) => string;
  readonly contentType: string;
  readonly trail?: (req: ServiceRequest) => TrailInfo;
  readonly throttle: AwsApiError;
  readonly internal: AwsApiError;
  /** The IAM service prefix (`ec2`, `elasticloadbalancing`, …) used in policies and messages. */
  readonly iamPrefix: string;
  /** The service's own error for an action IAM does not allow. */
  readonly denied: (iamAction: string, callerArn: string) => AwsApiError;
  /** CloudTrail prefixes EC2 error codes with `Client.` / `Server.`. */
  readonly trailCode: (err: AwsApiError) => string;
}

const plainCode = (err: AwsApiError): string => err.code;

const SERVICES: Readonly<Record<AwsService, ServiceDef>> = {
  elbv2: {
    iamPrefix: "elasticloadbalancing",
    denied: (action, arn) =>
      new AwsApiError(
        "AccessDenied",
        `User: ${arn} is not authorized to perform: ${action} because no identity-based policy allows the ${action} action`,
        403,
      ),
    handle: handleElbv2,
    errorBody: elbErrorBody,
    contentType: "text/xml",
    trail: elbTrail,
    throttle: new AwsApiError("Throttling", "Rate exceeded", 400),
    internal: new AwsApiError(
      "InternalFailure",
      "The request processing has failed because of an unknown error, exception or failure.",
      500,
    ),
    trailCode: plainCode,
  },
  ec2: {
    iamPrefix: "ec2",
    denied: (action, arn) =>
      new AwsApiError(
        "UnauthorizedOperation",
        `You are not authorized to perform this operation. User: ${arn} is not authorized to perform: ${action} because no identity-based policy allows the ${action} action`,
        403,
      ),
    handle: handleEc2,
    errorBody: ec2ErrorBody,
    contentType: "text/xml;charset=UTF-8",
    trail: ec2Trail,
    throttle: new AwsApiError("RequestLimitExceeded", "Request limit exceeded.", 503),
    internal: new AwsApiError("InternalError", "An internal error has occurred", 500),
    trailCode: (err) => `${err.status >= 500 ? "Server" : "Client"}.${err.code}`,
  },
  route53: {
    iamPrefix: "route53",
    denied: (action, arn) =>
      new AwsApiError(
        "AccessDenied",
        `User: ${arn} is not authorized to perform: ${action} because no identity-based policy allows the ${action} action`,
        403,
      ),
    handle: handleRoute53,
    errorBody: route53ErrorBody,
    contentType: "text/xml",
    trail: route53Trail,
    throttle: new AwsApiError("Throttling", "Rate exceeded", 400),
    internal: new AwsApiError("ServiceUnavailable", "Service Unavailable", 503),
    trailCode: plainCode,
  },
  cloudfront: {
    iamPrefix: "cloudfront",
    denied: (action, arn) =>
      new AwsApiError(
        "AccessDenied",
        `User: ${arn} is not authorized to perform: ${action} because no identity-based policy allows the ${action} action`,
        403,
      ),
    handle: handleCloudFront,
    errorBody: cloudFrontErrorBody,
    contentType: "text/xml",
    trail: cloudFrontTrail,
    throttle: new AwsApiError("Throttling", "Rate exceeded", 400),
    internal: new AwsApiError(
      "ServiceUnavailable",
      "CloudFront is currently experiencing problems. Please try again.",
      503,
    ),
    trailCode: plainCode,
  },
  cloudtrail: {
    iamPrefix: "cloudtrail",
    denied: (action, arn) =>
      new AwsApiError(
        "AccessDeniedException",
        `User: ${arn} is not authorized to perform: ${action} because no identity-based policy allows the ${action} action`,
        400,
      ),
    handle: handleCloudTrail,
    errorBody: (err) => cloudTrailErrorBody(err),
    contentType: "application/x-amz-json-1.1",
    throttle: new AwsApiError("ThrottlingException", "Rate exceeded", 400),
    internal: new AwsApiError("InternalFailure", "An internal error occurred.", 500),
    trailCode: plainCode,
  },
  tagging: {
    iamPrefix: "tag",
    denied: (action, arn) =>
      new AwsApiError(
        "AccessDeniedException",
        `User: ${arn} is not authorized to perform: ${action} because no identity-based policy allows the ${action} action`,
        400,
      ),
    handle: handleTagging,
    errorBody: (err) => taggingErrorBody(err),
    contentType: "application/x-amz-json-1.1",
    throttle: new AwsApiError("ThrottledException", "Rate exceeded", 400),
    internal: new AwsApiError("InternalServiceException", "An internal error occurred.", 500),
    trailCode: plainCode,
  },
  sts: {
    iamPrefix: "sts",
    denied: (action, arn) =>
      new AwsApiError(
        "AccessDenied",
        `User: ${arn} is not authorized to perform: ${action} because no identity-based policy allows the ${action} action`,
        403,
      ),
    handle: (_world, req, caller) => handleSts(caller.accounts, req, caller.accessKeyId),
    errorBody: stsErrorBody,
    contentType: "text/xml",
    throttle: new AwsApiError("Throttling", "Rate exceeded", 400),
    internal: new AwsApiError("InternalFailure", "An internal error occurred.", 500),
    trailCode: plainCode,
  },
};

/** What each service answers for a temporary access key sent without its session token. */
const INVALID_TOKEN: Readonly<Record<AwsService, string>> = {
  elbv2: "InvalidClientTokenId",
  ec2: "AuthFailure",
  route53: "InvalidClientTokenId",
  cloudfront: "InvalidClientTokenId",
  cloudtrail: "UnrecognizedClientException",
  tagging: "UnrecognizedClientException",
  sts: "InvalidClientTokenId",
};

const SERVICE_ALIASES: Readonly<Record<string, AwsService>> = {
  elasticloadbalancing: "elbv2",
  elbv2: "elbv2",
  ec2: "ec2",
  route53: "route53",
  cloudfront: "cloudfront",
  cloudtrail: "cloudtrail",
  tagging: "tagging",
  tag: "tagging",
  resourcegroupstaggingapi: "tagging",
  sts: "sts",
};

function credentialScope(req: IncomingMessage): { accessKeyId: string; region?: string; service?: string } {
  const auth = req.headers.authorization ?? "";
  const m = /Credential=([^/,\s]+)\/\d{8}\/([^/]+)\/([^/]+)\/aws4_request/.exec(auth);
  if (!m) return { accessKeyId: "anonymous" };
  return {
    accessKeyId: m[1] ?? "anonymous",
    ...(m[2] !== undefined ? { region: m[2] } : {}),
    ...(m[3] !== undefined ? { service: m[3] } : {}),
  };
}

/** Which service and operation a request is for, by its protocol. */
function route(
  req: IncomingMessage,
  path: string,
  query: URLSearchParams,
  form: Map<string, string>,
): { service: AwsService; action: string } | undefined {
  const method = req.method ?? "GET";
  if (path.startsWith("/2013-04-01/")) {
    const action = route53Action(method, path);
    return action !== undefined ? { service: "route53", action } : undefined;
  }
  if (path.startsWith("/2020-05-31/")) {
    const action = cloudFrontAction(method, path);
    return action !== undefined ? { service: "cloudfront", action } : undefined;
  }
  const target = req.headers["x-amz-target"];
  if (typeof target === "string") {
    const [prefix, action] =
      target.split(".").length > 1
        ? [target.slice(0, target.lastIndexOf(".")), target.slice(target.lastIndexOf(".") + 1)]
        : ["", ""];
    if (prefix.includes("CloudTrail_20131101")) return { service: "cloudtrail", action: action ?? "" };
    if (prefix === "ResourceGroupsTaggingAPI_20170126") return { service: "tagging", action: action ?? "" };
    return undefined;
  }
  const action = form.get("Action") ?? query.get("Action") ?? undefined;
  if (action === undefined) return undefined;
  const version = form.get("Version") ?? query.get("Version");
  if (version === "2015-12-01") return { service: "elbv2", action };
  if (version === "2016-11-15") return { service: "ec2", action };
  if (version === "2011-06-15") return { service: "sts", action };
  const scoped = SERVICE_ALIASES[credentialScope(req).service ?? ""];
  return scoped !== undefined ? { service: scoped, action } : undefined;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** The running endpoint's state: faults, the ELB token bucket, the call log. */
export class AwsEndpoint {
  public readonly server: Server;
  public faults: AwsFaults = {};
  public readonly callLog: AwsCall[] = [];
  private bucketTokens = 40;
  private bucketAt = performance.now();

  public constructor(
    private readonly world: AwsWorld,
    public readonly accounts: AwsAccounts = new AwsAccounts(world),
  ) {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        res.statusCode = 500;
        res.end(String(err));
      });
    });
  }

  public setFaults(f: AwsFaults): void {
    if (f.elbThrottleBucket === true && this.faults.elbThrottleBucket !== true) {
      this.bucketTokens = 40;
      this.bucketAt = performance.now();
    }
    this.faults = {
      ...f,
      ...(f.throttle ? { throttle: { ...f.throttle } } : {}),
      ...(f.deny ? { deny: [...f.deny] } : {}),
      ...(f.hang ? { hang: [...f.hang] } : {}),
    };
  }

  /** The access-denied error when the fault settings (or the caller's role) deny this action to the caller. */
  private deniedFault(service: AwsService, action: string, accessKeyId: string): AwsApiError | undefined {
    const def = SERVICES[service];
    const iamAction = `${def.iamPrefix}:${action}`;
    const deny = [...(this.faults.deny ?? []), ...this.accounts.deniedTo(accessKeyId)];
    if (!deny.includes(action) && !deny.includes(iamAction)) return undefined;
    return def.denied(iamAction, this.accounts.worldOf(accessKeyId).identityFor(accessKeyId).arn);
  }

  /** A temporary key (STS's) is valid only with its session token, as on AWS. */
  private tokenFault(
    service: AwsService,
    req: IncomingMessage,
    accessKeyId: string,
  ): AwsApiError | undefined {
    const session = this.accounts.session(accessKeyId);
    if (session === undefined) return undefined;
    const token = req.headers["x-amz-security-token"];
    if (token === session.sessionToken) return undefined;
    return new AwsApiError(
      INVALID_TOKEN[service],
      "The security token included in the request is invalid.",
      service === "ec2" ? 401 : 403,
    );
  }

  /** The fault this call suffers, if any. */
  private injectedFault(service: AwsService): AwsApiError | undefined {
    const def = SERVICES[service];
    const t = this.faults.throttle;
    if (t && t.count > 0 && (t.service === undefined || SERVICE_ALIASES[t.service] === service)) {
      t.count -= 1;
      return def.throttle;
    }
    if (service === "elbv2" && this.faults.elbThrottleBucket === true) {
      const now = performance.now();
      this.bucketTokens = Math.min(40, this.bucketTokens + ((now - this.bucketAt) / 1000) * 10);
      this.bucketAt = now;
      if (this.bucketTokens < 1) return def.throttle;
      this.bucketTokens -= 1;
    }
    if ((this.faults.errorRate ?? 0) > 0 && Math.random() < (this.faults.errorRate ?? 0)) return def.internal;
    return undefined;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const url = new URL(req.url ?? "/", "http://localhost");
    const contentType = req.headers["content-type"] ?? "";
    const form = contentType.includes("application/x-www-form-urlencoded")
      ? parseForm(body)
      : new Map<string, string>();
    if (req.method === "GET") for (const [k, v] of url.searchParams) if (!form.has(k)) form.set(k, v);
    const requestId = this.world.ids.requestId();
    const latency = this.faults.latencyMs ?? 0;
    if (latency > 0) await new Promise((resolve) => setTimeout(resolve, latency));

    const routed = route(req, url.pathname, url.searchParams, form);
    if (!routed) {
      res.writeHead(404, { "content-type": "text/xml", "x-amzn-RequestId": requestId });
      res.end(
        elbErrorBody(
          new AwsApiError(
            "UnknownOperation",
            `No simulated operation for ${req.method ?? ""} ${url.pathname}`,
            404,
          ),
          requestId,
        ),
      );
      this.callLog.push({
        service: "unknown",
        action: `${req.method ?? ""} ${url.pathname}`,
        status: 404,
        errorCode: "UnknownOperation",
      });
      return;
    }
    const { service, action } = routed;
    const def = SERVICES[service];
    const sreq: ServiceRequest = {
      action,
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body,
      form,
      requestId,
    };

    const scope = credentialScope(req);
    // The account of the key answers: its world, its CloudTrail.
    const world = this.accounts.worldOf(scope.accessKeyId);
    const whose = this.accounts.partitioned
      ? { account: world.accountId, accessKeyId: scope.accessKeyId }
      : {};
    const hang = this.faults.hang ?? [];
    if (hang.includes(action) || hang.includes(`${def.iamPrefix}:${action}`)) {
      // Never answered; `stop()` closes every connection, this one included.
      this.callLog.push({ service, action, status: 0, errorCode: "Hang", ...whose });
      return;
    }
    let result: ServiceResult | undefined;
    // IAM decides before the service does, and CloudTrail records the denied call (unlike a throttled one).
    const badToken = this.tokenFault(service, req, scope.accessKeyId);
    const denied = badToken === undefined ? this.deniedFault(service, action, scope.accessKeyId) : undefined;
    let error: AwsApiError | undefined = badToken ?? denied ?? this.injectedFault(service);
    const reachedService = error === undefined || denied !== undefined;
    if (!error) {
      try {
        result = def.handle(world, sreq, { accessKeyId: scope.accessKeyId, accounts: this.accounts });
      } catch (err) {
        if (!(err instanceof AwsApiError)) throw err;
        error = err;
      }
    }

    if (reachedService && def.trail && !/^(Describe|List|Get|Lookup)/.test(action)) {
      const info = def.trail(sreq);
      world.recordApiCall({
        service: service === "elbv2" ? "elasticloadbalancing" : service,
        action,
        accessKeyId: scope.accessKeyId,
        userAgent: req.headers["user-agent"] ?? "",
        requestId,
        region: scope.region ?? world.region,
        requestParameters: info.requestParameters,
        responseElements: error ? null : service === "ec2" ? { requestId, _return: true } : null,
        ...(error ? { errorCode: def.trailCode(error), errorMessage: error.message } : {}),
        resources: info.resources,
      });
    }

    if (error) {
      res.writeHead(error.status, { "content-type": def.contentType, "x-amzn-RequestId": requestId });
      res.end(def.errorBody(error, requestId));
      this.callLog.push({ service, action, status: error.status, errorCode: error.code, ...whose });
      return;
    }
    const status = result?.status ?? 200;
    res.writeHead(status, {
      "content-type": def.contentType,
      "x-amzn-RequestId": requestId,
      ...(result?.headers ?? {}),
    });
    res.end(result?.body ?? "");
    this.callLog.push({ service, action, status, ...whose });
  }
}
