/**
 * Builds the services commands run with, from a validated `Config`. The one place that turns
 * configuration into live clients, shared by the Slack app (`runtime.ts`) and the CLI (`cli.ts`).
 */
import { createEdgeProbe } from "./edge/probe.js";
import type { CommandServices } from "../commands/types.js";
import { createAwsClients } from "./aws/clients.js";
import { createAwsAdapter } from "./aws/sdk-adapter.js";
import type { Config } from "./config.js";
import { createKubeAdapter, loadKubeConfig } from "./kube/client-node-adapter.js";
import type { KubePort } from "./kube/port.js";
import type { Logger } from "./log.js";

export function createServices(
  config: Config,
  log: Logger,
  now: () => Date = () => new Date(),
  /** The bot (long-running) caches discovery, invalidated by watching CRDs and APIServices; the CLI does not. */
  opts: { readonly longRunning?: boolean } = {},
): Omit<CommandServices, "approvals"> {
  // Built on first use: commands that never touch the cluster (`approvals`, `audit`, `help`) work
  // without a kubeconfig, and a bad one is reported by the command that needs it.
  let adapter: KubePort | undefined;
  const kube = (): KubePort =>
    (adapter ??= createKubeAdapter(
      loadKubeConfig(config.kubeconfig !== undefined ? { path: config.kubeconfig } : undefined),
      {
        log,
        requestTimeoutMs: config.kubeTimeoutMs,
        ...(opts.longRunning === true ? { discoveryCache: { watch: true } } : {}),
      },
    ));
  const aws = config.aws
    ? createAwsAdapter(
        createAwsClients({
          region: config.aws.region,
          ...(config.aws.endpoint !== undefined ? { endpoint: config.aws.endpoint } : {}),
          ...(config.aws.profile !== undefined ? { profile: config.aws.profile } : {}),
          ...(config.aws.credentials !== undefined ? { credentials: config.aws.credentials } : {}),
          retryMode: "adaptive",
          maxAttempts: 5,
          timeoutMs: config.awsTimeoutMs,
        }),
      )
    : undefined;
  return {
    kube: {
      getNamespace: (name) => kube().getNamespace(name),
      discover: () => kube().discover(),
      listObjects: (type, namespace) => kube().listObjects(type, namespace),
      getObject: (type, namespace, name) => kube().getObject(type, namespace, name),
      listDeployments: (options) => kube().listDeployments(options),
      listPods: (namespace, labelSelector) => kube().listPods(namespace, labelSelector),
      podLog: (namespace, pod, container, tailLines) => kube().podLog(namespace, pod, container, tailLines),
      listEvents: (namespace, involved) => kube().listEvents(namespace, involved),
      listApiServices: () => kube().listApiServices(),
      listArgoApplications: () => kube().listArgoApplications(),
      getServiceEndpoints: (namespace, service) => kube().getServiceEndpoints(namespace, service),
      removeFinalizers: (type, namespace, name, precondition, remove) =>
        kube().removeFinalizers(type, namespace, name, precondition, remove),
      // Stops the discovery watches of a long-running adapter (nothing to stop if never built).
      close: () => adapter?.close?.() ?? Promise.resolve(),
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
