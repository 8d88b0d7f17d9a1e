/**
 * The endpoints and EndpointSlice controllers (`pkg/controller/endpoint`,
 * `pkg/controller/endpointslice`), simulated: for every Service with a selector (not
 * `ExternalName`), the pods of its namespace that match it become its addresses —
 *
 * - an `Endpoints` object named after the Service (its labels, one subset with `addresses` for
 *   ready pods and `notReadyAddresses` for the rest; no `subsets` at all when no pod matches), so
 *   a GET of it is 200 even with no pod;
 * - one `EndpointSlice` `<service>-<suffix>` labelled `kubernetes.io/service-name` and
 *   `endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io`, owned by the
 *   Service (the garbage collector removes it with the Service), with `endpoints: null` and no
 *   ports while no pod matches (the controller's placeholder).
 *
 * A Service without a selector gets nothing: its endpoints are someone else's (slices without the
 * controller's label are never touched). The Endpoints of a deleted Service are deleted. In a
 * Terminating namespace nothing new is created (the API refuses it); what exists is kept current.
 * A pod's address is `status.podIP`; it is ready when its `Ready` condition is True and it is not
 * being deleted.
 */
import { isRecord, type KubeObject } from "./object.js";
import { KubeApiError } from "./status.js";
import type { SimStore } from "./store.js";

export const SLICE_MANAGER = "endpointslice-controller.k8s.io";
const MANAGED_BY = "endpointslice.kubernetes.io/managed-by";
const SERVICE_NAME = "kubernetes.io/service-name";

interface Address {
  readonly ip: string;
  readonly ready: boolean;
  readonly terminating: boolean;
  readonly serving: boolean;
  readonly nodeName?: string;
  readonly pod: { readonly name: string; readonly uid?: string };
  /** The pod's named container ports, for a Service whose `targetPort` is a name. */
  readonly namedPorts: ReadonlyMap<string, number>;
}

function rec(v: unknown): Record<string, unknown> {
  return isRecord(v) ? v : {};
}

function selectorOf(svc: KubeObject): Record<string, string> | undefined {
  const spec = rec(svc.spec);
  if (spec.type === "ExternalName" || !isRecord(spec.selector)) return undefined;
  const sel = Object.fromEntries(Object.entries(spec.selector).map(([k, v]) => [k, String(v)]));
  return Object.keys(sel).length > 0 ? sel : undefined;
}

function addressesOf(store: SimStore, namespace: string, selector: Record<string, string>): Address[] {
  return store
    .list("v1", "Pod", namespace)
    .filter((p) => {
      const labels = p.metadata?.labels ?? {};
      return Object.entries(selector).every(([k, v]) => labels[k] === v);
    })
    .flatMap((p) => {
      const status = rec(p.status);
      if (typeof status.podIP !== "string" || status.podIP === "") return [];
      if (status.phase === "Succeeded" || status.phase === "Failed") return [];
      const conditions = Array.isArray(status.conditions) ? status.conditions.filter(isRecord) : [];
      const podReady = conditions.some((c) => c.type === "Ready" && c.status === "True");
      const terminating = p.metadata?.deletionTimestamp !== undefined;
      const nodeName = rec(p.spec).nodeName;
      const containers = Array.isArray(rec(p.spec).containers) ? (rec(p.spec).containers as unknown[]) : [];
      const namedPorts = new Map<string, number>();
      for (const c of containers)
        for (const cp of Array.isArray(rec(c).ports) ? (rec(c).ports as unknown[]) : [])
          if (typeof rec(cp).name === "string" && typeof rec(cp).containerPort === "number")
            namedPorts.set(rec(cp).name as string, rec(cp).containerPort as number);
      return [
        {
          ip: status.podIP,
          ready: podReady && !terminating,
          serving: podReady,
          terminating,
          ...(typeof nodeName === "string" ? { nodeName } : {}),
          pod: {
            name: p.metadata?.name ?? "",
            ...(p.metadata?.uid !== undefined ? { uid: p.metadata.uid } : {}),
          },
          namedPorts,
        },
      ];
    })
    .sort((a, b) => (a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : 0));
}

/**
 * The Service's ports as its endpoints carry them: the target port — a number, or a name the
 * pods' container ports resolve — else the Service's own port.
 */
function portsOf(svc: KubeObject, addresses: readonly Address[]): Record<string, unknown>[] {
  const ports = Array.isArray(rec(svc.spec).ports) ? (rec(svc.spec).ports as unknown[]).filter(isRecord) : [];
  return ports.map((p) => ({
    ...(typeof p.name === "string" && p.name !== "" ? { name: p.name } : {}),
    port:
      typeof p.targetPort === "number"
        ? p.targetPort
        : typeof p.targetPort === "string"
          ? (addresses.find((a) => a.namedPorts.has(p.targetPort as string))?.namedPorts.get(p.targetPort) ??
            p.port)
          : p.port,
    protocol: typeof p.protocol === "string" ? p.protocol : "TCP",
  }));
}

/** Where an address is: its node, and the pod behind it (both forms carry them alike). */
function placed(namespace: string, a: Address): Record<string, unknown> {
  return {
    ...(a.nodeName !== undefined ? { nodeName: a.nodeName } : {}),
    targetRef: {
      kind: "Pod",
      namespace,
      name: a.pod.name,
      ...(a.pod.uid !== undefined ? { uid: a.pod.uid } : {}),
    },
  };
}

export class EndpointControllers {
  /** `namespace/name` of the selector Services seen, so that a deleted one's Endpoints go too. */
  private readonly managed = new Set<string>();

  public constructor(private readonly store: SimStore) {}

  public reconcileAll(): void {
    const seen = new Set<string>();
    for (const svc of this.store.list("v1", "Service")) {
      const selector = selectorOf(svc);
      const ns = svc.metadata?.namespace ?? "";
      const name = svc.metadata?.name ?? "";
      if (selector === undefined) continue;
      seen.add(`${ns}/${name}`);
      const addresses = addressesOf(this.store, ns, selector);
      this.attempt(() => this.endpoints(svc, addresses));
      this.attempt(() => this.slice(svc, addresses));
    }
    for (const key of this.managed) {
      if (seen.has(key)) continue;
      const [ns, name] = key.split("/") as [string, string];
      this.attempt(() => {
        if (this.store.get("v1", "Endpoints", ns, name) !== undefined)
          this.store.delete("v1", "Endpoints", ns, name);
      });
    }
    this.managed.clear();
    for (const k of seen) this.managed.add(k);
  }

  /** A write the API refuses (a Terminating namespace, a concurrent writer) waits for the next pass. */
  private attempt(write: () => void): void {
    try {
      write();
    } catch (err) {
      if (!(err instanceof KubeApiError)) throw err;
    }
  }

  private endpoints(svc: KubeObject, addresses: readonly Address[]): void {
    const ns = svc.metadata?.namespace ?? "";
    const name = svc.metadata?.name ?? "";
    const ref = (a: Address) => ({ ip: a.ip, ...placed(ns, a) });
    const ready = addresses.filter((a) => a.ready).map(ref);
    const notReady = addresses.filter((a) => !a.ready).map(ref);
    const subsets =
      addresses.length === 0
        ? undefined
        : [
            {
              ...(ready.length > 0 ? { addresses: ready } : {}),
              ...(notReady.length > 0 ? { notReadyAddresses: notReady } : {}),
              ports: portsOf(svc, addresses),
            },
          ];
    const labels = svc.metadata?.labels;
    const cur = this.store.get("v1", "Endpoints", ns, name);
    const want = {
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: {
        ...(cur?.metadata ?? {}),
        name,
        namespace: ns,
        ...(labels !== undefined ? { labels } : {}),
      },
      ...(subsets !== undefined ? { subsets } : {}),
    };
    if (cur === undefined) this.store.create(want);
    else if (
      JSON.stringify(cur.subsets) !== JSON.stringify(subsets) ||
      JSON.stringify(cur.metadata?.labels) !== JSON.stringify(labels)
    )
      this.store.update(want);
  }

  private slice(svc: KubeObject, addresses: readonly Address[]): void {
    const ns = svc.metadata?.namespace ?? "";
    const name = svc.metadata?.name ?? "";
    const cur = this.store
      .list("discovery.k8s.io/v1", "EndpointSlice", ns)
      .find(
        (s) => s.metadata?.labels?.[SERVICE_NAME] === name && s.metadata.labels[MANAGED_BY] === SLICE_MANAGER,
      );
    const endpoints =
      addresses.length === 0
        ? null
        : addresses.map((a) => ({
            addresses: [a.ip],
            conditions: { ready: a.ready, serving: a.serving, terminating: a.terminating },
            ...placed(ns, a),
          }));
    const ports = addresses.length === 0 ? undefined : portsOf(svc, addresses);
    const body = {
      addressType: "IPv4",
      endpoints,
      ...(ports !== undefined ? { ports } : {}),
    };
    if (cur !== undefined) {
      if (
        JSON.stringify(cur.endpoints ?? null) === JSON.stringify(endpoints) &&
        JSON.stringify(cur.ports) === JSON.stringify(ports)
      )
        return;
      const next: KubeObject = {
        apiVersion: cur.apiVersion,
        kind: cur.kind,
        metadata: cur.metadata,
        ...body,
      };
      this.store.update(next);
      return;
    }
    this.store.create({
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: {
        generateName: `${name}-`,
        namespace: ns,
        labels: { ...(svc.metadata?.labels ?? {}), [SERVICE_NAME]: name, [MANAGED_BY]: SLICE_MANAGER },
        ownerReferences: [
          {
            apiVersion: "v1",
            kind: "Service",
            name,
            uid: svc.metadata?.uid ?? "",
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      ...body,
    });
  }
}
