/**
 * The adapter's reads of namespaces, of objects of any type and of a workload (its deployments,
 * pods, log and events): each a retried request ({@link callKube}) or every page of a list
 * ({@link listAll}), decoded into the port's snapshots. Lists of types whose snapshot needs only
 * metadata ask for metadata only, so the bot never holds a Secret's data.
 */
import {
  jsonArray,
  obj,
  optStr,
  toDeploymentSnapshot,
  toEventSnapshot,
  toNamespaceSnapshot,
  toObjectSnapshot,
  toPodSnapshot,
} from "./decode.js";
import type { CallContext } from "./errors.js";
import {
  callKube,
  type KubeRequests,
  listAll,
  listPath,
  namespacePath,
  orNull,
  resourcePath,
} from "./requests.js";
import { ACCEPT_JSON, ACCEPT_METADATA_LIST } from "./transport.js";
import type {
  DeploymentSnapshot,
  EventSnapshot,
  NamespaceSnapshot,
  ObjectSnapshot,
  PodSnapshot,
  ResourceType,
} from "./types.js";

/**
 * Types whose snapshot reads more than metadata (see `toObjectSnapshot`): an Ingress's class and
 * load-balancer status, a Service's type, class and status, a TargetGroupBinding's ARN. Keyed
 * `group/resource`; every other type is listed metadata-only.
 */
const FULL_OBJECT_TYPES: ReadonlySet<string> = new Set([
  "networking.k8s.io/ingresses",
  "/services",
  "elbv2.k8s.aws/targetgroupbindings",
]);

/** One namespace, `null` when it does not exist. */
export async function getNamespace(k: KubeRequests, name: string): Promise<NamespaceSnapshot | null> {
  const ns = await orNull(
    callKube(k, { verb: "get", resource: "namespaces", name }, () => k.raw.getJson(namespacePath(name))),
  );
  return ns ? toNamespaceSnapshot(ns) : null;
}

/** Every namespace, metadata only (`KubePort.listNamespaces`). */
export async function listNamespaces(k: KubeRequests): Promise<NamespaceSnapshot[]> {
  const ctx: CallContext = { verb: "list", resource: "namespaces" };
  const items = await listAll(k, ctx, async (cont, limit) => {
    const list = await k.raw.getJson(
      "/api/v1/namespaces",
      { limit: limit !== undefined ? String(limit) : undefined, continue: cont },
      ACCEPT_METADATA_LIST,
    );
    const page = jsonArray(list.items);
    return {
      // Metadata only, whichever form the server answered in.
      items: page.map((o) => ({ metadata: obj(obj(o).metadata) })),
      cont: optStr(obj(list.metadata).continue),
    };
  });
  return items.map(toNamespaceSnapshot);
}

/** Every object of one type in one namespace (all namespaces when `namespace` is undefined). */
export async function listObjects(
  k: KubeRequests,
  type: ResourceType,
  namespace?: string,
): Promise<ObjectSnapshot[]> {
  const ctx: CallContext = { verb: "list", resource: type.resource, group: type.group, namespace };
  const full = FULL_OBJECT_TYPES.has(`${type.group}/${type.resource}`);
  const items = await listAll(k, ctx, async (cont, limit) => {
    const list = await k.raw.getJson(
      resourcePath(type, namespace),
      { limit: limit !== undefined ? String(limit) : undefined, continue: cont },
      full ? ACCEPT_JSON : ACCEPT_METADATA_LIST,
    );
    const meta = obj(list.metadata);
    const page = jsonArray(list.items);
    return {
      // Metadata is all the snapshot takes from these types, whichever form the server chose;
      // a server that ignored the request still leaves no spec or data held past this page.
      // Each page is made snapshots at once, so a long list's parsed pages are not kept (and
      // copied by the collector) while the next ones are read. A PartialObjectMetadata item says
      // `meta.k8s.io/v1`; the snapshot names the listed type.
      items: page.map((o) => toObjectSnapshot(full ? o : { metadata: obj(obj(o).metadata) }, type)),
      cont: optStr(meta.continue),
    };
  });
  return items;
}

/** One object, `null` when absent. */
export async function getObject(
  k: KubeRequests,
  type: ResourceType,
  namespace: string,
  name: string,
): Promise<ObjectSnapshot | null> {
  const ctx: CallContext = { verb: "get", resource: type.resource, group: type.group, namespace, name };
  const found = await orNull(callKube(k, ctx, () => k.raw.getJson(resourcePath(type, namespace, name))));
  return found ? toObjectSnapshot(found, type) : null;
}

/** Deployments in all namespaces (or one), optionally filtered by a label selector. */
export async function listDeployments(
  k: KubeRequests,
  opts: { namespace?: string; labelSelector?: string } = {},
): Promise<DeploymentSnapshot[]> {
  const ctx: CallContext = {
    verb: "list",
    resource: "deployments",
    group: "apps",
    ...(opts.namespace !== undefined ? { namespace: opts.namespace } : {}),
  };
  const path =
    opts.namespace !== undefined
      ? `/apis/apps/v1/namespaces/${encodeURIComponent(opts.namespace)}/deployments`
      : "/apis/apps/v1/deployments";
  // Every Deployment is read to the last page, and held whole, anyway: bigger pages spare the
  // sequential round trips (3,000 Deployments were 6 pages of 500 one after another; now one of
  // 5,000).
  const pageSize = opts.labelSelector === undefined ? k.pageSize * EVERY_DEPLOYMENT_PAGES : k.pageSize;
  const items = await listPath(k, ctx, path, { labelSelector: opts.labelSelector }, pageSize);
  return items.map(toDeploymentSnapshot);
}

/** A list of every Deployment (of the cluster or a namespace) reads pages this many times the page size. */
export const EVERY_DEPLOYMENT_PAGES = 10;

/** The pods of a namespace, optionally filtered by a label selector. */
export async function listPods(
  k: KubeRequests,
  namespace: string,
  labelSelector?: string,
): Promise<PodSnapshot[]> {
  const ctx: CallContext = { verb: "list", resource: "pods", namespace };
  const items = await listPath(k, ctx, `${namespacePath(namespace)}/pods`, {
    labelSelector,
  });
  return items.map(toPodSnapshot);
}

/** The last `tailLines` non-empty lines of one container's log. */
export async function podLog(
  k: KubeRequests,
  namespace: string,
  pod: string,
  container: string,
  tailLines: number,
): Promise<string[]> {
  const ctx: CallContext = { verb: "get", resource: "pods/log", namespace, name: pod };
  const path = `${namespacePath(namespace)}/pods/${encodeURIComponent(pod)}/log`;
  const text = await callKube(k, ctx, () => k.raw.getText(path, { container, tailLines: String(tailLines) }));
  return text.split("\n").filter((l) => l.length > 0);
}

/** Events in a namespace, optionally those about one object. */
export async function listEvents(
  k: KubeRequests,
  namespace: string,
  involved?: { kind: string; name: string },
): Promise<EventSnapshot[]> {
  const ctx: CallContext = { verb: "list", resource: "events", namespace };
  const fieldSelector = involved
    ? `involvedObject.kind=${involved.kind},involvedObject.name=${involved.name}`
    : undefined;
  const items = await listPath(k, ctx, `${namespacePath(namespace)}/events`, {
    fieldSelector,
  });
  return items.map(toEventSnapshot);
}
