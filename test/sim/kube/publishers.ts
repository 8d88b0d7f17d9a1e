/**
 * What kube-controller-manager puts in every namespace, simulated:
 *
 * - the root-CA publisher (`pkg/controller/certificates/rootcacertpublisher`) keeps a ConfigMap
 *   `kube-root-ca.crt` holding the cluster's CA bundle under `ca.crt`;
 * - the service-account controller (`pkg/controller/serviceaccount`) keeps a ServiceAccount
 *   `default`.
 *
 * Both create what is missing in a namespace that is not being deleted — so a namespace someone
 * created "empty" holds these two objects, and a deleted one gets them back while it is Active —
 * and leave a Terminating namespace alone (the namespace controller deletes them with the rest).
 * The real controllers answer the namespace's watch event within milliseconds; here they answer
 * it before the write that created the namespace returns, so what a test reads next is settled.
 */
import type { KubeObject } from "./object.js";
import { KubeApiError } from "./status.js";
import type { SimStore } from "./store.js";

export const ROOT_CA_CONFIGMAP = "kube-root-ca.crt";
export const DEFAULT_SERVICE_ACCOUNT = "default";

const DESCRIPTION =
  "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

/** A stand-in bundle: the simulator serves plain HTTP, so nothing ever verifies against it. */
const CA_BUNDLE =
  "-----BEGIN CERTIFICATE-----\nTUlJQnNpbXVsYXRlZC1jbHVzdGVyLWNhLW5vdC1mb3ItdmVyaWZpY2F0aW9u\n-----END CERTIFICATE-----\n";

/** The two objects every Active namespace holds on a real cluster. */
export function publishedIn(namespace: string): KubeObject[] {
  return [
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: ROOT_CA_CONFIGMAP,
        namespace,
        annotations: { "kubernetes.io/description": DESCRIPTION },
      },
      data: { "ca.crt": CA_BUNDLE },
    },
    {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: DEFAULT_SERVICE_ACCOUNT, namespace },
    },
  ];
}

const PUBLISHED = new Set(publishedIn("").map((o) => `${o.kind ?? ""}/${o.metadata?.name ?? ""}`));

export class NamespacePublishers {
  public constructor(private readonly store: SimStore) {}

  /** Publish into every Active namespace now, then on every namespace added and every copy deleted. */
  public start(): () => void {
    this.reconcileAll();
    return this.store.onChange((e) => {
      const meta = e.object.metadata ?? {};
      if (e.def.group !== "") return;
      if (e.def.resource === "namespaces" && e.type === "ADDED" && meta.name !== undefined)
        this.publish(meta.name);
      else if (
        e.type === "DELETED" &&
        meta.namespace !== undefined &&
        PUBLISHED.has(`${e.def.kind}/${meta.name ?? ""}`)
      )
        this.publish(meta.namespace);
    });
  }

  public reconcileAll(): void {
    for (const ns of this.store.list("v1", "Namespace"))
      if (ns.metadata?.name !== undefined) this.publish(ns.metadata.name);
  }

  private publish(namespace: string): void {
    const ns = this.store.get("v1", "Namespace", undefined, namespace);
    if (ns === undefined || ns.metadata?.deletionTimestamp !== undefined) return;
    for (const o of publishedIn(namespace)) {
      if (this.store.get("v1", o.kind ?? "", namespace, o.metadata?.name ?? "") !== undefined) continue;
      try {
        this.store.create(o);
      } catch (err) {
        // The namespace began terminating meanwhile: nothing is published there any more.
        if (!(err instanceof KubeApiError)) throw err;
      }
    }
  }
}
