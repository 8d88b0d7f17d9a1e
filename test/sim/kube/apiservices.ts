/**
 * kube-aggregator's availability check for APIServices backed by a Service (upstream
 * `AvailableConditionController`, v1.32 wording): the `Available` condition follows from the
 * Service, its ready endpoints and — for the simulator's `failingGroups` fault — a discovery check
 * that fails although pods are ready. An unavailable APIService makes its group-version fail
 * discovery (kube-aggregator answers 503), so a scenario can hold a broken metrics-server simply as
 * an APIService whose Service has no ready endpoints.
 */
import type { KubeObject } from "./object.js";
import type { SimStore } from "./store.js";

const APISERVICE = ["apiregistration.k8s.io/v1", "APIService"] as const;

interface Availability {
  readonly status: "True" | "False";
  readonly reason: string;
  readonly message: string;
}

type Json = Record<string, unknown>;

function rec(v: unknown): Json {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {};
}

function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, "Z");
}

export class ApiServiceAvailability {
  public constructor(
    private readonly store: SimStore,
    /** Group-versions whose discovery check fails even with ready endpoints (the fault). */
    private readonly faultGroups: () => readonly string[],
  ) {}

  /** Group-versions whose discovery fails now: the fault's, plus every unavailable APIService's. */
  public failingGroups(): string[] {
    const out = new Set(this.faultGroups());
    for (const a of this.store.list(...APISERVICE)) {
      const gv = this.groupVersionOf(a);
      if (gv !== undefined && this.evaluate(a)?.status === "False") out.add(gv);
    }
    return [...out];
  }

  /** Write each remote APIService's `Available` condition when it changed (as the aggregator does). */
  public reconcile(): void {
    for (const a of this.store.list(...APISERVICE)) {
      const want = this.evaluate(a);
      if (want === undefined) continue;
      const conditions = list(rec(a.status).conditions).map(rec);
      const cur = conditions.find((c) => c.type === "Available");
      if (cur?.status === want.status && cur.reason === want.reason && cur.message === want.message) continue;
      const next = {
        type: "Available",
        ...want,
        lastTransitionTime:
          cur?.status === want.status && typeof cur.lastTransitionTime === "string"
            ? cur.lastTransitionTime
            : rfc3339(this.store.clock()),
      };
      this.store.update(
        {
          ...a,
          status: { ...rec(a.status), conditions: [...conditions.filter((c) => c !== cur), next] },
        },
        { subresource: "status" },
      );
    }
  }

  /** `group/version` of an APIService the simulator does not serve itself (a remote one). */
  private groupVersionOf(a: KubeObject): string | undefined {
    const spec = rec(a.spec);
    if (typeof spec.group !== "string" || typeof spec.version !== "string") return undefined;
    if (spec.service === undefined || spec.service === null) return undefined;
    const served = this.store.registry
      .groupVersions()
      .some((x) => x.group === spec.group && x.version === spec.version);
    return served ? undefined : `${spec.group}/${spec.version}`;
  }

  private evaluate(a: KubeObject): Availability | undefined {
    const gv = this.groupVersionOf(a);
    if (gv === undefined) return undefined;
    const ref = rec(rec(a.spec).service);
    const ns = typeof ref.namespace === "string" ? ref.namespace : "";
    const name = typeof ref.name === "string" ? ref.name : "";
    const port = typeof ref.port === "number" ? ref.port : 443;
    const svc = this.store.get("v1", "Service", ns, name);
    if (svc === undefined) {
      return {
        status: "False",
        reason: "ServiceNotFound",
        message: `service/${name} in "${ns}" is not present`,
      };
    }
    const svcPort = list(rec(svc.spec).ports)
      .map(rec)
      .find((p) => p.port === port);
    if (svcPort === undefined) {
      return {
        status: "False",
        reason: "ServicePortError",
        message: `service/${name} in "${ns}" is not listening on port ${port}`,
      };
    }
    const portName = typeof svcPort.name === "string" ? svcPort.name : "";
    const ready = this.readyAddresses(ns, name);
    if (ready.length === 0) {
      return {
        status: "False",
        reason: "MissingEndpoints",
        message: `endpoints for service/${name} in "${ns}" have no addresses with port name "${portName}"`,
      };
    }
    if (this.faultGroups().includes(gv)) {
      const url = `https://${ready[0] ?? ""}:${this.targetPort(ns, name)}/apis/${gv}`;
      return {
        status: "False",
        reason: "FailedDiscoveryCheck",
        message: `failing or missing response from ${url}: Get "${url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
      };
    }
    return { status: "True", reason: "Passed", message: "all checks passed" };
  }

  /** Ready addresses from the Service's EndpointSlices, else from its core Endpoints. */
  private readyAddresses(ns: string, service: string): string[] {
    const slices = this.store
      .list("discovery.k8s.io/v1", "EndpointSlice", ns)
      .filter((s) => s.metadata?.labels?.["kubernetes.io/service-name"] === service);
    if (slices.length > 0) {
      return slices.flatMap((s) =>
        list(s.endpoints)
          .map(rec)
          // An unset `ready` means ready (EndpointSlice API).
          .filter((e) => rec(e.conditions).ready !== false)
          .flatMap((e) => list(e.addresses).filter((x): x is string => typeof x === "string")),
      );
    }
    const ep = this.store.get("v1", "Endpoints", ns, service);
    return list(ep?.subsets)
      .map(rec)
      .flatMap((s) => list(s.addresses).map((x) => String(rec(x).ip)));
  }

  private targetPort(ns: string, service: string): number {
    const slice = this.store
      .list("discovery.k8s.io/v1", "EndpointSlice", ns)
      .find((s) => s.metadata?.labels?.["kubernetes.io/service-name"] === service);
    const p = rec(list(slice?.ports)[0]).port;
    return typeof p === "number" ? p : 443;
  }
}

/**
 * The objects behind a simulated aggregated API: an APIService, its Service and its one pod, `ready`
 * or not (the endpoints controllers give the Service its addresses). Nothing is replaced.
 */
export function ensureAggregatedApi(store: SimStore, gv: string, opts: { readonly ready: boolean }): void {
  const [group, version] = gv.split("/");
  if (group === undefined || version === undefined || group === "") return;
  if (store.registry.groupVersions().some((x) => x.group === group && x.version === version)) return;
  const name = `${version}.${group}`;
  const service = group.startsWith("metrics") ? "metrics-server" : (group.split(".")[0] ?? group);
  const ns = "kube-system";
  const labels = { "k8s-app": service };
  const ip = "10.0.1.23";
  const pod = `${service}-6d4f8b9c7d-x2k4p`;
  if (store.get("v1", "Service", ns, service) === undefined) {
    store.load({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: service, namespace: ns, labels },
      spec: {
        type: "ClusterIP",
        clusterIP: "10.100.0.10",
        clusterIPs: ["10.100.0.10"],
        selector: labels,
        ports: [{ name: "https", port: 443, protocol: "TCP", targetPort: "https" }],
      },
    });
    // Its one pod; the endpoints controllers make its EndpointSlice and Endpoints from it.
    store.load({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: pod, namespace: ns, labels },
      spec: {
        containers: [
          {
            name: service,
            image: `${service}:v1`,
            ports: [{ name: "https", containerPort: 10250, protocol: "TCP" }],
          },
        ],
      },
      status: {
        phase: "Running",
        podIP: ip,
        conditions: [{ type: "Ready", status: opts.ready ? "True" : "False" }],
      },
    });
  }
  if (store.get(...APISERVICE, undefined, name) !== undefined) return;
  store.load({
    apiVersion: APISERVICE[0],
    kind: APISERVICE[1],
    metadata: { name, labels },
    spec: {
      group,
      version,
      groupPriorityMinimum: 100,
      versionPriority: 100,
      insecureSkipTLSVerify: true,
      service: { name: service, namespace: ns, port: 443 },
    },
  });
}
