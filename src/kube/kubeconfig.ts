/**
 * Loading the Kubernetes configuration: an explicit kubeconfig (path or text), else the standard
 * places, refused with a `Config` error when nothing usable is found. Owns only the loading: what
 * a request does with the credentials is `./transport.ts`'s.
 */
import { existsSync } from "node:fs";
import { delimiter } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { ErrorCode, UnstuckError } from "../errors.js";

/**
 * Standard loading: an explicit kubeconfig path, else `KUBECONFIG`/`~/.kube/config`/in-cluster
 * (the caller passes what `config.ts` read — this module reads no environment itself beyond
 * what `loadFromDefault` does).
 */
export function loadKubeConfig(source?: { path?: string; text?: string }): KubeConfig {
  const kc = new KubeConfig();
  const from =
    source?.path ?? (source?.text !== undefined ? "the given kubeconfig" : "KUBECONFIG / ~/.kube/config");
  try {
    if (source?.text !== undefined) kc.loadFromString(source.text);
    else if (source?.path !== undefined) loadFiles(kc, source.path);
    else kc.loadFromDefault();
  } catch (err) {
    throw new UnstuckError(
      ErrorCode.Config,
      `Cannot read the Kubernetes configuration from ${from}: ${err instanceof Error ? err.message : String(err)}`,
      { variable: "KUBECONFIG" },
    );
  }
  const cluster = kc.getCurrentCluster();
  // With nothing to load, client-node falls back to a placeholder cluster on localhost.
  if (!cluster || (cluster.name === "cluster" && /^https?:\/\/localhost(:8080)?\/?$/.test(cluster.server))) {
    throw new UnstuckError(
      ErrorCode.Config,
      source?.path !== undefined || source?.text !== undefined
        ? `The Kubernetes configuration from ${from} has no usable current context (check current-context and its cluster).`
        : "No Kubernetes configuration found: set KUBECONFIG (or --kubeconfig), or run the bot in a cluster with a service account.",
      { variable: "KUBECONFIG" },
    );
  }
  return kc;
}

/**
 * A KUBECONFIG value may list several files (`a:b`), merged in order as kubectl does; files in the
 * list that do not exist are skipped, unless none exists.
 */
function loadFiles(kc: KubeConfig, value: string): void {
  const files = value.split(delimiter).filter((f) => f.length > 0);
  const present = files.length > 1 ? files.filter((f) => existsSync(f)) : files;
  const [first, ...rest] = present.length > 0 ? present : files;
  kc.loadFromFile(first ?? value);
  for (const f of rest) {
    const more = new KubeConfig();
    more.loadFromFile(f);
    kc.mergeConfig(more, true);
  }
}
