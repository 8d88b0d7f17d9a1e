/**
 * The stuck-namespace watcher, when `UNSTUCK_WATCH_CHANNEL` is set: one leader among replicas
 * watches namespaces and posts the diagnosis of one stuck past the threshold to the watch channel.
 */
import type { WebClient } from "@slack/web-api";
import { diagnoseOptions } from "../../commands/finalize.js";
import type { CommandServices } from "../command-contract.js";
import type { Config } from "../config.js";
import { diagnoseNamespace } from "../diagnosis/diagnose.js";
import { loadKubeConfig } from "../kube/client-node-adapter.js";
import { createNamespaceWatchIo, type NamespaceWatchIo } from "../kube/namespace-watch.js";
import type { Logger } from "../log.js";
import type { RedisConnection } from "../redis-connection.js";
import { slackWatcherClient } from "../slack/watcher-client.js";
import { createWatcherService, type WatcherService, type WatcherServiceOptions } from "../watcher/service.js";
import type { WatcherReceipts } from "../watcher/watcher.js";
import { byBot, byCluster } from "../trust/keys.js";
import type { SealKeys } from "../trust/sealed.js";

export interface WatcherDeps {
  readonly config: Config;
  readonly redis: RedisConnection;
  readonly prefix: string;
  readonly services: CommandServices;
  readonly client: WebClient;
  readonly log: Logger;
  /** In a fleet: the cluster watched, named in the value of its cards' buttons. */
  readonly cluster?: string;
  /** This process's key (signs where its cards are) and the keyring; `cluster` the one it watches. */
  readonly seal: SealKeys & { readonly cluster: string };
  /** Its namespace watch (default from the kubeconfig) and timings (tests pass both). */
  readonly options?: { readonly io?: NamespaceWatchIo; readonly tuning?: WatcherServiceOptions["tuning"] };
}

/**
 * Receipts of where the watcher posted its cards: signed with this process's key, accepted from the bot
 * or the watched cluster's workers (whichever replica leads).
 */
function watcherReceipts(seal: SealKeys & { readonly cluster: string }): WatcherReceipts {
  return {
    sign: (fields) => (seal.key !== undefined ? seal.key.sign("watcher-card", fields) : ""),
    check: (fields, sig) =>
      seal.keyring.verify("watcher-card", fields, sig, (o) => byBot(o) || byCluster(seal.cluster)(o)).ok,
  };
}

/** The watcher service, or nothing when no watch channel is configured. */
export function createWatcher(d: WatcherDeps): WatcherService | undefined {
  const { config, services } = d;
  const watch = config.watch;
  return watch === undefined
    ? undefined
    : createWatcherService({
        redis: d.redis,
        prefix: d.prefix,
        channel: watch.channel,
        thresholdMs: config.blockedAfterSeconds * 1000,
        leaseMs: watch.leaseMs,
        io:
          d.options?.io ??
          createNamespaceWatchIo(
            loadKubeConfig(config.kubeconfig !== undefined ? { path: config.kubeconfig } : undefined),
            { timeoutMs: config.kubeTimeoutMs },
          ),
        diagnose: (namespace) => diagnoseNamespace(services.kube, namespace, diagnoseOptions(services)),
        slack: slackWatcherClient(d.client, d.cluster),
        receipts: watcherReceipts(d.seal),
        log: d.log,
        ...(d.options?.tuning !== undefined ? { tuning: d.options.tuning } : {}),
      });
}
