/**
 * The first reads of a namespace's diagnosis started ahead: a one-shot process (the terminal's
 * `ns <name>`) sends them as soon as it can reach the cluster, and loads the rest of its code while
 * they travel. The diagnosis then asks for them as it always does and is handed the reads already
 * under way, once; every later call reads afresh.
 */
import type { KubePort } from "./port.js";

/**
 * `kube` with `discover()` and `getNamespace(namespace)` already sent. Their first calls (by
 * anyone) get those answers or failures; each later call, and a namespace of another name, goes to
 * `kube`. A read nobody asks for fails quietly (no unhandled rejection).
 */
export function primeNamespaceReads(kube: KubePort, namespace: string): KubePort {
  let discovery: ReturnType<KubePort["discover"]> | undefined = kube.discover();
  let read: ReturnType<KubePort["getNamespace"]> | undefined = kube.getNamespace(namespace);
  discovery.catch(() => undefined);
  read.catch(() => undefined);
  return {
    ...kube,
    discover() {
      const ahead = discovery;
      discovery = undefined;
      return ahead ?? kube.discover();
    },
    getNamespace(name) {
      const ahead = name === namespace ? read : undefined;
      if (ahead !== undefined) read = undefined;
      return ahead ?? kube.getNamespace(name);
    },
  };
}
