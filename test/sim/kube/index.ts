/**
 * A Kubernetes API server simulator faithful at the wire: the real `kubectl` and
 * `@kubernetes/client-node` work against it unmodified. See `startKubeSim`.
 */
import { createServer, type ServerResponse } from "node:http";
import { writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { stringify as toYaml } from "yaml";

import { loadScenario, type Scenario } from "../scenario.js";
import { INSTALL_RESOURCES, ResourceRegistry } from "./registry.js";
import { SimStore } from "./store.js";
import { LogStore } from "./logs.js";
import { NamespaceController } from "./namespace-controller.js";
import { admitDelete } from "./admission.js";
import { EndpointControllers } from "./endpoints.js";
import { NamespacePublishers } from "./publishers.js";
import { NodeLifecycle } from "./node-lifecycle.js";
import { WorkloadControllers } from "./workloads.js";
import { ApiServiceAvailability, ensureAggregatedApi } from "./apiservices.js";
import { createHandler, type KubeFaults, type RequestRecord } from "./server.js";
import { rbacAllows, type RbacRequest } from "./rbac.js";
import type { KubeObject } from "./object.js";

export type { KubeFaults, ForbidRule, RequestRecord } from "./server.js";
export type { KubeObject, ObjectMeta, OwnerRef } from "./object.js";
export { SimStore, PropagationPolicy } from "./store.js";
export type { StoreEvent, DeleteOptions, WriteOptions } from "./store.js";
export { KubeApiError } from "./status.js";
export type { ResourceDef } from "./registry.js";

/** A running simulator. */
export interface KubeSim {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Kubeconfig YAML pointing at {@link url} (plain http), context `sim`, user `unstuck` by default. */
  kubeconfig(options?: { user?: string; namespace?: string }): string;
  writeKubeconfig(path: string, options?: { user?: string; namespace?: string }): Promise<void>;
  /** Replace the injected faults (a throttle `count` starts afresh). */
  setFaults(f: KubeFaults): void;
  /** Direct object access: create/get/list/update/delete by apiVersion+kind, bypassing HTTP and faults. */
  readonly store: SimStore;
  /** Append container log lines, dated now. */
  appendLog(namespace: string, pod: string, container: string, lines: string[]): void;
  /** Requests served so far (method, path, status; plus query and user). */
  requests(): RequestRecord[];
  resetRequests(): void;
  /** Run the namespace controller once, now. */
  reconcileNow(): Promise<void>;
  /**
   * The node's kubelet stops posting status and confirming pod deletions; after the grace period
   * the node lifecycle controller marks the node `Ready=Unknown` and taints it unreachable.
   */
  silenceKubelet(node: string): void;
  stop(): Promise<void>;
}

export interface KubeSimOptions {
  /** Default 0: any free port. */
  port?: number;
  /** A loaded scenario, or a path to a scenario file. */
  scenario?: Scenario | string;
  faults?: KubeFaults;
  /** Namespace controller period (default 1000 ms); it also runs right after every write. */
  controllerIntervalMs?: number;
  /**
   * `false`: the namespace controller does not run (kube-controller-manager down, or its
   * namespace controller disabled): a deleted namespace keeps its content, conditions and
   * `kubernetes` finalizer as they are.
   */
  namespaceController?: boolean;
  /**
   * `false`: the root-CA publisher and the service-account controller do not run (disabled in
   * kube-controller-manager's `--controllers`): a new namespace holds no `kube-root-ca.crt`
   * ConfigMap and no `default` ServiceAccount — for tests that count a namespace's objects exactly.
   */
  namespacePublishers?: boolean;
  /** The cluster's clock (timestamps, scenario `now-…` values, log `sinceSeconds`). */
  now?: () => Date;
  /** Also serve the kinds an installation creates (RBAC, PodDisruptionBudget, admission policies). */
  installKinds?: boolean;
  /** Period of `BOOKMARK` events on watches that allow them (default 1000 ms; the real server's is ~1 min). */
  bookmarkIntervalMs?: number;
  /**
   * Authorize every resource request with RBAC over the ClusterRoles, Roles and bindings in the
   * store (`rbac.ts`; implies `installKinds`). `superusers` are in `system:masters` (default: the
   * simulator's own kubeconfig user, `unstuck`).
   */
  rbac?: { readonly superusers?: readonly string[] };
}

const BASE_NAMESPACES = ["default", "kube-node-lease", "kube-public", "kube-system"];

function tokenFor(user: string): string {
  return `sim-${Buffer.from(user, "utf8").toString("hex")}`;
}

function userFromToken(token: string | undefined): string | undefined {
  if (token === undefined || token === "") return "system:anonymous";
  if (!token.startsWith("sim-")) return undefined;
  const user = Buffer.from(token.slice(4), "hex").toString("utf8");
  return user === "" ? undefined : user;
}

/**
 * Start the simulator on 127.0.0.1. Without a scenario the cluster holds only the four base
 * namespaces; with one, its `kube` section is loaded verbatim (finalizers, deletionTimestamps and
 * status included). Only the namespace controller, the garbage collector, the kubelets of Ready
 * nodes, the pod garbage collector and the pvc-protection controller run (`workloads.ts`), and the
 * publishers of every namespace's CA bundle and default ServiceAccount (`publishers.ts`): nothing
 * else removes finalizers, exactly like a cluster whose controllers are stuck. DELETEs pass the
 * admission webhooks (`admission.ts`).
 */
export async function startKubeSim(options: KubeSimOptions = {}): Promise<KubeSim> {
  const now = options.now ?? (() => new Date());
  const rbac = options.rbac;
  const registry = new ResourceRegistry(
    options.installKinds === true || rbac !== undefined ? INSTALL_RESOURCES : [],
  );
  const store = new SimStore(registry, now);
  store.setDeleteAdmission((d, o) => admitDelete(store, d, o));
  const logs = new LogStore(now);
  let faults: KubeFaults = { ...(options.faults ?? {}) };
  let throttleLeft = faults.throttle?.count ?? 0;
  let records: RequestRecord[] = [];
  const watches = new Set<ServerResponse>();

  const scenario =
    typeof options.scenario === "string" ? loadScenario(options.scenario, { now: now() }) : options.scenario;
  const kube = scenario?.kube;
  if (kube !== undefined && kube.failingGroups.length > 0) {
    faults = {
      ...faults,
      failingGroups: [...new Set([...(faults.failingGroups ?? []), ...kube.failingGroups])],
    };
  }

  const scenarioNames = new Set(
    (kube?.objects ?? []).filter((o) => o.kind === "Namespace").map((o) => o.metadata.name),
  );
  for (const ns of BASE_NAMESPACES) {
    if (!scenarioNames.has(ns)) store.load({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  }
  // CRDs first so their kinds resolve, then namespaces, then everything else in file order.
  const rank = (o: KubeObject) =>
    o.kind === "CustomResourceDefinition" ? 0 : o.kind === "Namespace" ? 1 : 2;
  const objects = [...(kube?.objects ?? [])].sort((a, b) => rank(a) - rank(b));
  for (const o of objects) {
    const ns = o.metadata.namespace;
    const d = store.registry.byKind(o.apiVersion, o.kind);
    if (
      d?.namespaced === true &&
      ns !== undefined &&
      store.get("v1", "Namespace", undefined, ns) === undefined
    ) {
      store.load({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    }
    store.load(o);
  }
  for (const l of kube?.logs ?? []) {
    const [ns, pod] = l.pod.split("/") as [string, string];
    logs.append(ns, pod, l.container, l.lines);
  }
  // A failing group is an aggregated API whose pods are ready but fail the discovery check; make
  // its pod not ready (or load an APIService whose Service has none) and it fails the same way,
  // as MissingEndpoints.
  const availability = new ApiServiceAvailability(store, () => faults.failingGroups ?? []);
  for (const gv of faults.failingGroups ?? []) ensureAggregatedApi(store, gv, { ready: true });
  const endpoints = new EndpointControllers(store);
  endpoints.reconcileAll();
  availability.reconcile();

  const controller = new NamespaceController(store, () => availability.failingGroups());
  const nodes = new NodeLifecycle(store);
  store.setKubeletCheck((node) => nodes.kubeletUp(node));
  const workloads = new WorkloadControllers(store);
  const stopPublishing =
    options.namespacePublishers === false ? () => undefined : new NamespacePublishers(store).start();
  let scheduled = false;
  let stopped = false;
  const runController = () => {
    scheduled = false;
    if (stopped) return;
    nodes.reconcileAll();
    workloads.reconcileAll();
    endpoints.reconcileAll();
    availability.reconcile();
    if (options.namespaceController !== false) controller.reconcileAll();
  };
  const unsubscribe = store.onChange(() => {
    if (scheduled || stopped) return;
    scheduled = true;
    setImmediate(runController);
  });
  const timer = setInterval(runController, options.controllerIntervalMs ?? 1000);
  timer.unref();

  let hostPort = "127.0.0.1:0";
  const server = createServer(
    createHandler({
      store,
      logs,
      faults: () => ({ ...faults, failingGroups: availability.failingGroups() }),
      takeThrottle: () => {
        if (throttleLeft > 0) {
          throttleLeft--;
          return true;
        }
        const rate = faults.throttle?.rate ?? 0;
        return rate > 0 && Math.random() < rate;
      },
      record: (r) => records.push(r),
      userForToken: userFromToken,
      now,
      hostPort: () => hostPort,
      watches,
      bookmarkIntervalMs: options.bookmarkIntervalMs ?? 1000,
      ...(rbac !== undefined
        ? {
            authorize: (r: RbacRequest) =>
              (rbac.superusers ?? ["unstuck"]).includes(r.user) || rbacAllows(store, r),
          }
        : {}),
    }),
  );
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  hostPort = `127.0.0.1:${port}`;
  const url = `http://${hostPort}`;
  if (options.namespaceController !== false) controller.reconcileAll();

  const kubeconfig = (o: { user?: string; namespace?: string } = {}): string => {
    const user = o.user ?? "unstuck";
    return toYaml({
      apiVersion: "v1",
      kind: "Config",
      // client-node refuses plain http unless TLS verification is explicitly skipped.
      clusters: [{ name: "sim", cluster: { server: url, "insecure-skip-tls-verify": true } }],
      contexts: [
        {
          name: "sim",
          context: { cluster: "sim", user, ...(o.namespace !== undefined ? { namespace: o.namespace } : {}) },
        },
      ],
      "current-context": "sim",
      preferences: {},
      users: [{ name: user, user: { token: tokenFor(user) } }],
    });
  };

  return {
    url,
    kubeconfig,
    writeKubeconfig: (path, o) => writeFile(path, kubeconfig(o), { mode: 0o600 }),
    setFaults(f) {
      faults = { ...f };
      throttleLeft = f.throttle?.count ?? 0;
      for (const gv of faults.failingGroups ?? []) ensureAggregatedApi(store, gv, { ready: true });
      endpoints.reconcileAll();
      availability.reconcile();
    },
    store,
    appendLog(namespace, pod, container, lines) {
      logs.append(namespace, pod, container, lines, now());
    },
    requests: () => [...records],
    resetRequests() {
      records = [];
    },
    silenceKubelet(node) {
      nodes.silence(node);
    },
    reconcileNow() {
      nodes.reconcileAll();
      workloads.reconcileAll();
      endpoints.reconcileAll();
      availability.reconcile();
      controller.reconcileAll();
      return Promise.resolve();
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      unsubscribe();
      stopPublishing();
      for (const w of watches) w.end();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
