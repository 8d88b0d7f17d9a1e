/**
 * Builds the services commands run with, from a validated `Config`. The one place that turns
 * configuration into live clients, shared by the Slack app (`runtime.ts`) and the CLI (`cli.ts`).
 */
import type { CommandServices } from "../commands/types.js";
import { createAwsClients } from "./aws/clients.js";
import { createAwsAdapter } from "./aws/sdk-adapter.js";
import type { Config } from "./config.js";
import { createKubeAdapter, loadKubeConfig } from "./kube/client-node-adapter.js";
import type { Logger } from "./log.js";

export function createServices(
  config: Config,
  log: Logger,
  now: () => Date = () => new Date(),
): Omit<CommandServices, "approvals"> {
  const kc = loadKubeConfig(config.kubeconfig !== undefined ? { path: config.kubeconfig } : undefined);
  const aws = config.aws
    ? createAwsAdapter(
        createAwsClients({
          region: config.aws.region,
          ...(config.aws.endpoint !== undefined ? { endpoint: config.aws.endpoint } : {}),
          ...(config.aws.profile !== undefined ? { profile: config.aws.profile } : {}),
          ...(config.aws.credentials !== undefined ? { credentials: config.aws.credentials } : {}),
          retryMode: "adaptive",
          maxAttempts: 5,
        }),
      )
    : undefined;
  return {
    kube: createKubeAdapter(kc, { log }),
    now,
    log,
    blockedAfterSeconds: config.blockedAfterSeconds,
    ...(aws
      ? { aws: { port: aws, ...(config.clusterName !== undefined ? { cluster: config.clusterName } : {}) } }
      : {}),
  };
}
