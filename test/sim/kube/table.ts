/**
 * Server-side printing: kubectl asks for `application/json;as=Table;v=v1;g=meta.k8s.io` and
 * prints whatever columns come back, as it does against a real server.
 */
import type { ResourceDef } from "./registry.js";
import { getPath, isRecord, type KubeObject } from "./object.js";

interface Column {
  name: string;
  type: string;
  format?: string;
  priority?: number;
  cell: (o: KubeObject, now: Date) => unknown;
}

/** k8s.io/apimachinery/pkg/util/duration.HumanDuration. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8)
    return hours % 24 === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const days = Math.floor(hours / 24) % 365;
    return days === 0 ? `${Math.floor(hours / 24 / 365)}y` : `${Math.floor(hours / 24 / 365)}y${days}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

const name: Column = { name: "Name", type: "string", format: "name", cell: (o) => o.metadata?.name ?? "" };
const age: Column = {
  name: "Age",
  type: "string",
  cell: (o, now) => {
    const t = o.metadata?.creationTimestamp;
    return t === undefined ? "<unknown>" : humanDuration(now.getTime() - new Date(t).getTime());
  },
};
const str =
  (path: string, fallback = "<none>") =>
  (o: KubeObject) => {
    const v = getPath(o, path);
    return v === undefined || v === null || v === "" ? fallback : v;
  };
const num = (path: string) => (o: KubeObject) => {
  const v = getPath(o, path);
  return typeof v === "number" ? v : 0;
};

function podReady(o: KubeObject): string {
  const specContainers = getPath(o, "spec.containers");
  const total = Array.isArray(specContainers) ? specContainers.length : 0;
  const statuses = getPath(o, "status.containerStatuses");
  const ready = Array.isArray(statuses) ? statuses.filter((s) => isRecord(s) && s.ready === true).length : 0;
  return `${ready}/${total}`;
}

function podRestarts(o: KubeObject): number {
  const statuses = getPath(o, "status.containerStatuses");
  return Array.isArray(statuses)
    ? statuses.reduce<number>(
        (n, s) => n + (isRecord(s) && typeof s.restartCount === "number" ? s.restartCount : 0),
        0,
      )
    : 0;
}

function podStatus(o: KubeObject): unknown {
  if (o.metadata?.deletionTimestamp !== undefined) return "Terminating";
  return getPath(o, "status.reason") ?? getPath(o, "status.phase") ?? "Unknown";
}

function nodeStatus(o: KubeObject): string {
  const conds = getPath(o, "status.conditions");
  const ready = (Array.isArray(conds) ? conds : []).find((c) => isRecord(c) && c.type === "Ready");
  const status = [isRecord(ready) ? (ready.status === "True" ? "Ready" : "NotReady") : "Unknown"];
  if (getPath(o, "spec.unschedulable") === true) status.push("SchedulingDisabled");
  return status.join(",");
}

function nodeRoles(o: KubeObject): string {
  const roles = Object.keys(o.metadata?.labels ?? {})
    .filter((k) => k.startsWith("node-role.kubernetes.io/"))
    .map((k) => k.slice("node-role.kubernetes.io/".length))
    .filter((r) => r !== "");
  return roles.length > 0 ? roles.sort().join(",") : "<none>";
}

function ingressHosts(o: KubeObject): string {
  const rules = getPath(o, "spec.rules");
  const hosts = Array.isArray(rules)
    ? rules.map((r) => (isRecord(r) && typeof r.host === "string" ? r.host : "*"))
    : [];
  return hosts.length === 0 ? "*" : hosts.join(",");
}

function ingressAddress(o: KubeObject): string {
  const lbs = getPath(o, "status.loadBalancer.ingress");
  const addrs = Array.isArray(lbs)
    ? lbs.map((l) => (isRecord(l) ? ((l.hostname ?? l.ip ?? "") as string) : "")).filter((a) => a !== "")
    : [];
  return addrs.join(",");
}

function columnsFor(d: ResourceDef): Column[] {
  const k = `${d.group}/${d.resource}`;
  switch (k) {
    case "/namespaces":
      return [name, { name: "Status", type: "string", cell: str("status.phase", "") }, age];
    case "/pods":
      return [
        name,
        { name: "Ready", type: "string", cell: podReady },
        { name: "Status", type: "string", cell: podStatus },
        { name: "Restarts", type: "string", cell: podRestarts },
        age,
        { name: "IP", type: "string", priority: 1, cell: str("status.podIP") },
        { name: "Node", type: "string", priority: 1, cell: str("spec.nodeName") },
      ];
    case "apps/deployments":
      return [
        name,
        {
          name: "Ready",
          type: "string",
          cell: (o) => `${num("status.readyReplicas")(o)}/${num("spec.replicas")(o)}`,
        },
        { name: "Up-to-date", type: "integer", cell: num("status.updatedReplicas") },
        { name: "Available", type: "integer", cell: num("status.availableReplicas") },
        age,
      ];
    case "networking.k8s.io/ingresses":
      return [
        name,
        { name: "Class", type: "string", cell: str("spec.ingressClassName") },
        { name: "Hosts", type: "string", cell: ingressHosts },
        { name: "Address", type: "string", cell: ingressAddress },
        {
          name: "Ports",
          type: "string",
          cell: (o) => (getPath(o, "spec.tls") !== undefined ? "80, 443" : "80"),
        },
        age,
      ];
    case "apiregistration.k8s.io/apiservices":
      // kube-aggregator's printer: Local or namespace/name; True, or "False (Reason)".
      return [
        name,
        {
          name: "Service",
          type: "string",
          cell: (o) => {
            const s = getPath(o, "spec.service");
            return isRecord(s) ? `${String(s.namespace)}/${String(s.name)}` : "Local";
          },
        },
        {
          name: "Available",
          type: "string",
          cell: (o) => {
            const conds = getPath(o, "status.conditions");
            const c = (Array.isArray(conds) ? conds : []).find((x) => isRecord(x) && x.type === "Available");
            if (!isRecord(c)) return "Unknown";
            const status = String(c.status);
            return status !== "True" && typeof c.reason === "string" && c.reason !== ""
              ? `${status} (${c.reason})`
              : status;
          },
        },
        age,
      ];
    case "/nodes":
      // The node printer: Ready, NotReady (Ready condition False or Unknown), or Unknown (none).
      return [
        name,
        { name: "Status", type: "string", cell: nodeStatus },
        { name: "Roles", type: "string", cell: nodeRoles },
        age,
        { name: "Version", type: "string", cell: str("status.nodeInfo.kubeletVersion", "") },
      ];
    case "admissionregistration.k8s.io/validatingwebhookconfigurations":
    case "admissionregistration.k8s.io/mutatingwebhookconfigurations":
      return [
        name,
        {
          name: "Webhooks",
          type: "integer",
          cell: (o) =>
            Array.isArray(getPath(o, "webhooks")) ? (getPath(o, "webhooks") as unknown[]).length : 0,
        },
        age,
      ];
    case "/services":
      return [
        name,
        { name: "Type", type: "string", cell: str("spec.type", "ClusterIP") },
        { name: "Cluster-IP", type: "string", cell: str("spec.clusterIP") },
        age,
      ];
    case "/events":
      return [
        {
          name: "Last Seen",
          type: "string",
          cell: (o, now) => {
            const t = getPath(o, "lastTimestamp") ?? getPath(o, "eventTime") ?? o.metadata?.creationTimestamp;
            return typeof t === "string" ? humanDuration(now.getTime() - new Date(t).getTime()) : "<unknown>";
          },
        },
        { name: "Type", type: "string", cell: str("type", "") },
        { name: "Reason", type: "string", cell: str("reason", "") },
        {
          name: "Object",
          type: "string",
          cell: (o) =>
            `${String(getPath(o, "involvedObject.kind")).toLowerCase()}/${String(getPath(o, "involvedObject.name"))}`,
        },
        { name: "Message", type: "string", cell: str("message", "") },
      ];
    default:
      return [name, age];
  }
}

/** A `meta.k8s.io/v1` Table of `objects`; rows embed metadata (or the object when asked). */
export function toTable(
  d: ResourceDef,
  objects: readonly KubeObject[],
  listMeta: Record<string, unknown>,
  includeObject: string | undefined,
  now: Date,
): Record<string, unknown> {
  const cols = columnsFor(d);
  return {
    kind: "Table",
    apiVersion: "meta.k8s.io/v1",
    metadata: listMeta,
    columnDefinitions: cols.map((c) => ({
      name: c.name,
      type: c.type,
      format: c.format ?? "",
      description: "",
      priority: c.priority ?? 0,
    })),
    rows: objects.map((o) => ({
      cells: cols.map((c) => c.cell(o, now)),
      object:
        includeObject === "None"
          ? undefined
          : includeObject === "Object"
            ? o
            : { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: o.metadata },
    })),
  };
}
