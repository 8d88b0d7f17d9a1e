/**
 * Builds the services commands run with, from a validated `Config`. The one place that turns
 * configuration into live clients, shared by the Slack app (`runtime.ts`) and the CLI (`cli.ts`).
 */
import { createEdgeProbe } from "./net/probe.js";
import type { CommandServices } from "./command-contract.js";
import type { AwsPort } from "./aws/port.js";
import type { Config } from "./config.js";
import { ErrorCode, UnstuckError } from "./errors.js";
import type { KubePort } from "./kube/port.js";
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

/** What a hand-made port without the deletion guard's methods answers (the adapter has them). */
function missing(what: string): UnstuckError {
  return new UnstuckError(ErrorCode.Config, `This Kubernetes adapter cannot ${what}.`);
}

export function createServices(
  config: Config,
  log: Logger,
  now: () => Date = () => new Date(),
  /** The bot (long-running) caches discovery, invalidated by watching CRDs and APIServices; the CLI does not. */
  opts: { readonly longRunning?: boolean } = {},
): Omit<CommandServices, "approvals"> {
  // Built on first use: commands that never touch the cluster (`approvals`, `audit`, `help`) work
  // without a kubeconfig, and a bad one is reported by the command that needs it.
  // @kubernetes/client-node is imported then too: `help`, `approvals`, `audit` never load it.
  let adapter: Promise<KubePort> | undefined;
  let built: KubePort | undefined;
  const kube = (): Promise<KubePort> =>
    (adapter ??= import("./kube/client-node-adapter.js").then(({ createKubeAdapter, loadKubeConfig }) => {
      built = createKubeAdapter(
        loadKubeConfig(config.kubeconfig !== undefined ? { path: config.kubeconfig } : undefined),
        {
          log,
          requestTimeoutMs: config.kubeTimeoutMs,
          ...(opts.longRunning === true ? { discoveryCache: { watch: true } } : {}),
        },
      );
      return built;
    }));
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
            retryMode: "adaptive",
            maxAttempts: 5,
            timeoutMs: config.awsTimeoutMs,
          }),
        );
      })
    : undefined;
  return {
    kube: {
      getNamespace: async (name) => (await kube()).getNamespace(name),
      discover: async () => (await kube()).discover(),
      listObjects: async (type, namespace, options) => (await kube()).listObjects(type, namespace, options),
      getObject: async (type, namespace, name) => (await kube()).getObject(type, namespace, name),
      listDeployments: async (options) => (await kube()).listDeployments(options),
      listPods: async (namespace, labelSelector) => (await kube()).listPods(namespace, labelSelector),
      podLog: async (namespace, pod, container, tailLines) =>
        (await kube()).podLog(namespace, pod, container, tailLines),
      listEvents: async (namespace, involved) => (await kube()).listEvents(namespace, involved),
      listApiServices: async () => (await kube()).listApiServices(),
      listArgoApplications: async () => (await kube()).listArgoApplications(),
      getServiceEndpoints: async (namespace, service) =>
        (await kube()).getServiceEndpoints(namespace, service),
      // The write context too: the adapter names the request to the API server (field manager, User-Agent).
      removeFinalizers: async (type, namespace, name, precondition, remove, write) =>
        (await kube()).removeFinalizers(type, namespace, name, precondition, remove, write),
      // The deletion guard's writes and its reconcile loop's list (the adapter has all three).
      annotateNamespace: async (name, key, value, seen, write) => {
        const k = await kube();
        if (k.annotateNamespace === undefined) throw missing("write namespace annotations");
        return k.annotateNamespace(name, key, value, seen, write);
      },
      listNamespaces: async () => {
        const k = await kube();
        if (k.listNamespaces === undefined) throw missing("list namespaces");
        return k.listNamespaces();
      },
      removeNamespaceAnnotation: async (name, key, expected, write) => {
        const k = await kube();
        if (k.removeNamespaceAnnotation === undefined) throw missing("remove namespace annotations");
        return k.removeNamespaceAnnotation(name, key, expected, write);
      },
      // Stops the discovery watches of a long-running adapter (nothing to stop if never built).
      close: () => built?.close?.() ?? Promise.resolve(),
    },
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
