/**
 * Builds the services commands run with, from a validated `Config`. The one place that turns
 * configuration into live clients, shared by the Slack app (`main.ts`) and the CLI (`cli.ts`).
 */
import type { CommandServices } from "../commands/types.js";
import type { Config } from "./config.js";
import { createKubeAdapter, loadKubeConfig } from "./kube/client-node-adapter.js";
import type { Logger } from "./log.js";

export function createServices(
  config: Config,
  log: Logger,
  now: () => Date = () => new Date(),
): CommandServices {
  const kc = loadKubeConfig(config.kubeconfig !== undefined ? { path: config.kubeconfig } : undefined);
  return { kube: createKubeAdapter(kc, { log }), now, log };
}
