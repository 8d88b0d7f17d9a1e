/**
 * The adapter's discovery: every resource type the API server serves, from the two aggregated
 * documents when it serves them, else group by group ({@link discoverUncached}); and the I/O of
 * the discovery cache that keeps it between diagnoses ({@link createDiscoveryCache}).
 */
import type { KubeConfig } from "@kubernetes/client-node";
import { mapLimit } from "../util/concurrency.js";
import {
  isAggregatedDiscovery,
  jsonArray,
  obj,
  optStr,
  readAggregatedDiscovery,
  str,
  toResourceTypes,
} from "./decode.js";
import {
  DISCOVERY_WATCHES,
  DiscoveryCache,
  type DiscoveryCacheIo,
  type DiscoveryCacheOptions,
  type WatchTarget,
} from "./discovery-cache.js";
import type { CallContext } from "./errors.js";
import { callKube, type KubeRequests } from "./requests.js";
import { ACCEPT_DISCOVERY, ACCEPT_METADATA_LIST, ACCEPT_METADATA_WATCH, openWatch } from "./transport.js";
import type { DiscoveryFailure, DiscoverySnapshot, ResourceType } from "./types.js";
import type { OpenWatch } from "./watch-loop.js";

/** Discovery without the cache: aggregated when served, else group by group (`concurrency` at once). */
export async function discoverUncached(k: KubeRequests, concurrency: number): Promise<DiscoverySnapshot> {
  const resources: ResourceType[] = [];
  const failures: DiscoveryFailure[] = [];
  // Both documents at once: with aggregated discovery they are the whole of discovery.
  const [coreDoc, groupsDoc] = await Promise.all(
    ["/api", "/apis"].map((path) =>
      callKube(k, { verb: "get", resource: `${path} (discovery)` }, () =>
        k.raw.getJson(path, {}, ACCEPT_DISCOVERY),
      ),
    ),
  );
  if (coreDoc !== undefined && isAggregatedDiscovery(coreDoc)) {
    readAggregatedDiscovery(coreDoc, resources, failures);
  } else {
    // An APIVersions answer: the server predates aggregated discovery (or turned it off).
    const coreList = await callKube(k, { verb: "get", resource: "/api/v1 (discovery)" }, () =>
      k.raw.getJson("/api/v1"),
    );
    resources.push(...toResourceTypes("", "v1", jsonArray(coreList.resources)));
  }
  if (groupsDoc !== undefined && isAggregatedDiscovery(groupsDoc)) {
    readAggregatedDiscovery(groupsDoc, resources, failures);
    return { resources, failures } satisfies DiscoverySnapshot;
  }
  // An APIGroupList: one request per group for its preferred version's resources.
  const targets = (Array.isArray(groupsDoc?.groups) ? groupsDoc.groups : []).map((x) => {
    const g = obj(x);
    const first = Array.isArray(g.versions) ? obj(g.versions[0]).version : undefined;
    return {
      group: str(g.name),
      version: optStr(obj(g.preferredVersion).version) ?? optStr(first) ?? "v1",
    };
  });
  const results = await mapLimit(targets, concurrency, (t) =>
    callKube(k, { verb: "get", resource: `/apis/${t.group}/${t.version} (discovery)` }, () =>
      k.raw.getJson(`/apis/${encodeURIComponent(t.group)}/${encodeURIComponent(t.version)}`),
    ),
  );
  results.forEach((r, i) => {
    const t = targets[i];
    if (!t) return;
    if (r.ok) resources.push(...toResourceTypes(t.group, t.version, jsonArray(r.value.resources)));
    else
      failures.push({
        groupVersion: `${t.group}/${t.version}`,
        message: r.error instanceof Error ? r.error.message : String(r.error),
      });
  });
  return { resources, failures } satisfies DiscoverySnapshot;
}

/**
 * The discovery cache of one adapter, loading with `load`. Its watches use client-node's `Watch`
 * (undici fetch, the kubeconfig's pooled dispatcher and credentials, one JSON event per line),
 * asking for metadata-only objects. Not limited: a watch holds its connection for minutes and is
 * not a request the API server queues.
 */
export function createDiscoveryCache(
  k: KubeRequests,
  kc: KubeConfig,
  load: () => Promise<DiscoverySnapshot>,
  options: DiscoveryCacheOptions,
): DiscoveryCache {
  const watches = Object.fromEntries(
    DISCOVERY_WATCHES.map((t) => [t.resource, openWatch(kc, ACCEPT_METADATA_WATCH, t.path)]),
  ) as Record<WatchTarget["resource"], OpenWatch>;
  const io: DiscoveryCacheIo = {
    load,
    async listResourceVersion(target) {
      const ctx: CallContext = { verb: "list", resource: target.resource, group: target.group };
      const list = await callKube(k, ctx, () =>
        k.raw.getJson(target.path, { limit: "1" }, ACCEPT_METADATA_LIST),
      );
      return str(obj(list.metadata).resourceVersion);
    },
    watch: (target) => watches[target.resource],
    ...(k.log !== undefined ? { log: k.log } : {}),
  };
  return new DiscoveryCache(io, options);
}
