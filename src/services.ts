/**
 * Builds the services commands run with, from a validated `Config`. The one place that turns
 * configuration into live clients, shared by the Slack app (`runtime.ts`) and the CLI (`cli.ts`).
 */
import { settlesWithin } from "./util/deadline.js";
import { createEdgeProbe } from "./net/probe.js";
import type { CommandServices } from "./command-contract.js";
import type { AwsPort } from "./aws/port.js";
import type { Config } from "./config.js";
import {
  createLimiter,
  DEFAULT_KUBE_CONCURRENCY,
  withRequestCaller,
  type RequestLimiter,
} from "./kube/limiter.js";
import type { KubePort } from "./kube/port.js";
import { redisSharedBudget } from "./kube/shared-budget.js";
import type { Logger } from "./log.js";

/**
 * An `AwsPort` whose SDK clients are imported and built on its first call: the AWS SDK is the
 * biggest thing a process loads after @kubernetes/client-node, and most commands (and most
 * namespaces: no Load Balancer Controller finalizer) never call AWS (the terminal starts in ≤ 1 s).
 */
function lazyAwsPort(load: () => Promise<AwsPort>): AwsPort {
  let port: Promise<AwsPort> | undefined;
  return new Proxy({} as AwsPort, {
    get: (_target, name) =>
      typeof name !== "string" || name === "then"
        ? undefined
        : async (...args: unknown[]): Promise<unknown> => {
            port ??= load();
            const p = (await port) as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
            return p[name]?.(...args);
          },
  });
}

/**
 * The requests of one namespace's reads queue as one caller of the adapter's limiter (unless an
 * outer caller is named): the limiter serves callers round-robin, so a diagnosis of a namespace
 * with a thousand types does not starve one of a namespace with five.
 */
function inNamespace<T>(namespace: string | undefined, read: () => Promise<T>): Promise<T> {
  return namespace === undefined ? read() : withRequestCaller(`namespace:${namespace}`, read);
}

/** The fleet's request budget at one API server: the limiter that asks it, and what closes both. */
interface SharedKubeBudget {
  readonly limiter: RequestLimiter;
  close(): Promise<void>;
}

/**
 * A per-process limiter (the local bound) in front of the fleet's budget in Redis, on a connection
 * of its own that fails fast while Redis is away (the limiter then applies the local bound alone).
 */
async function sharedKubeBudget(
  config: Config,
  log: Logger,
  server: string,
  limit: number,
): Promise<SharedKubeBudget> {
  const { createRedisConnection } = await import("./redis-connection.js");
  const redis = createRedisConnection(config, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    lazyConnect: true,
  });
  // An outage is logged once by the limiter; the connection's own errors would repeat it.
  redis.on("error", () => undefined);
  // Connected before the first request asks (no offline queue: asking earlier would fail). A Redis
  // away now only means the first requests run under the local bound.
  await settlesWithin(
    redis.connect().catch(() => undefined),
    config.kubeTimeoutMs,
  );
  const limiter = createLimiter({
    concurrency: DEFAULT_KUBE_CONCURRENCY,
    budget: redisSharedBudget(redis, { prefix: config.redisPrefix, server, limit }),
    log,
  });
  return {
    limiter,
    close: async () => {
      await limiter.close();
      await redis.quit().catch(() => undefined);
    },
  };
}

/**
 * Which argument of each Kubernetes call names the namespace it reads (its requests then queue as
 * that namespace's caller of the limiter); `null`: a cluster-wide read or a write. Typed over every
 * method of the port, so a method added to `KubePort` does not compile until it is forwarded here:
 * a hand-written forwarder once left four reads out, and the causes they find never reached anyone.
 */
const NAMESPACE_ARGUMENT: { readonly [M in Exclude<keyof KubePort, "close">]: 0 | 1 | null } = {
  getNamespace: 0,
  discover: null,
  listObjects: 1,
  getObject: 1,
  listDeployments: null,
  listPods: 0,
  podLog: 0,
  listEvents: 0,
  listApiServices: null,
  listArgoApplications: null,
  getServiceEndpoints: 0,
  listAdmissionWebhooks: null,
  serviceExists: 0,
  getNode: null,
  listPodPlacements: 0,
  // Writes carry their own write context (field manager, User-Agent) through unchanged.
  removeFinalizers: null,
  annotateNamespace: null,
  listNamespaces: null,
  removeNamespaceAnnotation: null,
};

/** A `KubePort` that builds the adapter on its first call and forwards every method to it. */
function forwardKube(adapter: () => Promise<KubePort>, close: () => Promise<void>): KubePort {
  const port: Record<string, unknown> = { close };
  for (const [method, at] of Object.entries(NAMESPACE_ARGUMENT)) {
    port[method] = (...args: unknown[]): Promise<unknown> => {
      const namespace = at === null ? undefined : args[at];
      return inNamespace(typeof namespace === "string" ? namespace : undefined, async () => {
        const target = (await adapter()) as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
        const call = target[method];
        if (call === undefined) throw new Error(`the Kubernetes adapter has no ${method}`);
        return call.apply(target, args);
      });
    };
  }
  return port as unknown as KubePort;
}

export function createServices(
  config: Config,
  log: Logger,
  now: () => Date = () => new Date(),
  /**
   * The bot (long-running) caches discovery, invalidated by watching CRDs and APIServices, and
   * keeps every Deployment current by a watch; the CLI does neither.
   */
  opts: { readonly longRunning?: boolean } = {},
): Omit<CommandServices, "approvals"> {
  // Built on first use: commands that never touch the cluster (`approvals`, `audit`, `help`) work
  // without a kubeconfig, and a bad one is reported by the command that needs it.
  // @kubernetes/client-node is imported then too: `help`, `approvals`, `audit` never load it.
  let adapter: Promise<KubePort> | undefined;
  let built: KubePort | undefined;
  let budget: SharedKubeBudget | undefined;
  const kube = (): Promise<KubePort> =>
    (adapter ??= import("./kube/client-node-adapter.js").then(
      async ({ createKubeAdapter, loadKubeConfig }) => {
        const kc = loadKubeConfig(config.kubeconfig !== undefined ? { path: config.kubeconfig } : undefined);
        // The bot's replicas share one budget per API server in Redis; the CLI keeps the local bound.
        const server = kc.getCurrentCluster()?.server;
        if (opts.longRunning === true && config.kubeRequestBudget !== undefined && server !== undefined) {
          budget = await sharedKubeBudget(config, log, server, config.kubeRequestBudget);
        }
        built = createKubeAdapter(kc, {
          log,
          requestTimeoutMs: config.kubeTimeoutMs,
          ...(opts.longRunning === true ? { discoveryCache: { watch: true }, deploymentCache: {} } : {}),
          ...(budget !== undefined ? { maxInFlight: budget.limiter } : {}),
        });
        return built;
      },
    ));
  const awsConfig = config.aws;
  // The bot loads the clients' modules at start (nothing built, nothing called), so its first
  // command and first approval click do not pay for the imports; errors surface at first use.
  if (opts.longRunning === true) {
    void Promise.all([
      import("./kube/client-node-adapter.js"),
      ...(awsConfig ? [import("./aws/clients.js"), import("./aws/sdk-adapter.js")] : []),
    ]).catch(() => undefined);
  }
  const aws = awsConfig
    ? lazyAwsPort(async () => {
        const [{ createAwsClients }, { createAwsAdapter }] = await Promise.all([
          import("./aws/clients.js"),
          import("./aws/sdk-adapter.js"),
        ]);
        return createAwsAdapter(
          createAwsClients({
            region: awsConfig.region,
            ...(awsConfig.endpoint !== undefined ? { endpoint: awsConfig.endpoint } : {}),
            ...(awsConfig.profile !== undefined ? { profile: awsConfig.profile } : {}),
            ...(awsConfig.credentials !== undefined ? { credentials: awsConfig.credentials } : {}),
            ...(awsConfig.roleArn !== undefined ? { roleArn: awsConfig.roleArn } : {}),
            ...(awsConfig.externalId !== undefined ? { externalId: awsConfig.externalId } : {}),
            ...(awsConfig.edge !== undefined ? { edge: awsConfig.edge } : {}),
            retryMode: "adaptive",
            maxAttempts: 5,
            timeoutMs: config.awsTimeoutMs,
          }),
        );
      })
    : undefined;
  return {
    kube: forwardKube(kube, async () => {
      // Stops the discovery watches of a long-running adapter (nothing to stop if never built).
      await built?.close();
      await budget?.close();
    }),
    now,
    log,
    blockedAfterSeconds: config.blockedAfterSeconds,
    diagnosisDeadlineMs: config.diagnosisDeadlineMs,
    probe: createEdgeProbe({
      resolvers: config.edgeProbe.resolvers,
      timeoutMs: 3_000,
      ...(config.edgeProbe.httpVia !== undefined ? { httpVia: config.edgeProbe.httpVia } : {}),
    }),
    healthPaths: config.edgeProbe.healthPaths,
    ...(aws
      ? { aws: { port: aws, ...(config.clusterName !== undefined ? { cluster: config.clusterName } : {}) } }
      : {}),
  };
}
