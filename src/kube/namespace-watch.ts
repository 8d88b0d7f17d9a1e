/**
 * Namespaces as the watcher sees them: a metadata-only list (paged, `continue` followed) and a
 * metadata-only watch, through `@kubernetes/client-node` (the kubeconfig's TLS and credentials).
 * Metadata is all the watcher needs — name, uid, deletionTimestamp, resourceVersion — so it asks
 * for `PartialObjectMetadata(List)`, as the namespace controller does; plain JSON is the fallback.
 *
 * I/O only: the watcher (src/watcher) decides what the events mean.
 */
import { type KubeConfig, Watch } from "@kubernetes/client-node";
import { ErrorCode, UnstuckError } from "../errors.js";
import { jsonArray, obj, optStr } from "./decode.js";
import { mapKubeError } from "./errors.js";
import { loadKubeConfig } from "./kubeconfig.js";
import {
  ACCEPT_METADATA_LIST,
  ACCEPT_METADATA_WATCH,
  DEFAULT_KUBE_TIMEOUT_MS,
  ResourceApi,
  watchConfig,
} from "./transport.js";

/** What the watcher keeps of a namespace. */
export interface NamespaceMeta {
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  /** RFC 3339, set once deletion was requested. */
  readonly deletionTimestamp?: string;
}

/** One watch event: `ADDED`/`MODIFIED`/`DELETED` carry a namespace; `BOOKMARK` only a revision. */
export type NamespaceWatchEvent =
  | { readonly type: "ADDED" | "MODIFIED" | "DELETED"; readonly namespace: NamespaceMeta }
  | { readonly type: "BOOKMARK"; readonly resourceVersion: string }
  /** The server ended the watch with a Status (410 Gone: the revision is compacted, re-list). */
  | { readonly type: "ERROR"; readonly code: number; readonly message: string };

export interface NamespaceWatchIo {
  /** Every namespace now, and the revision of that list (to watch from). */
  list(): Promise<{ readonly items: readonly NamespaceMeta[]; readonly resourceVersion: string }>;
  /**
   * Watch from `resourceVersion` (with bookmarks); resolves once the server accepted the request,
   * rejects when it did not (403, unreachable). `onEnd` is called once when the stream ends
   * (`undefined` for a clean end, e.g. `timeoutSeconds`). The returned function stops the watch.
   */
  watch(
    resourceVersion: string,
    timeoutSeconds: number,
    onEvent: (e: NamespaceWatchEvent) => void,
    onEnd: (err?: unknown) => void,
  ): Promise<() => void>;
}

/** The watcher's own reading of a string field: only a string (or a `Date`) counts. */
function str(v: unknown): string {
  return typeof v === "string" ? v : v instanceof Date ? v.toISOString().replace(/\.\d{3}Z$/, "Z") : "";
}

function toMeta(o: unknown): NamespaceMeta {
  const m = obj(obj(o).metadata);
  const deletion = str(m.deletionTimestamp);
  return {
    name: str(m.name),
    uid: str(m.uid),
    resourceVersion: str(m.resourceVersion),
    ...(deletion !== "" ? { deletionTimestamp: deletion } : {}),
  };
}

/** The I/O from a kubeconfig (text or loaded); `timeoutMs` bounds one list page. */
export function createNamespaceWatchIo(
  source: string | KubeConfig,
  options: { readonly timeoutMs?: number; readonly pageSize?: number } = {},
): NamespaceWatchIo {
  const kc = typeof source === "string" ? loadKubeConfig({ text: source }) : source;
  const cluster = kc.getCurrentCluster();
  if (!cluster)
    throw new UnstuckError(ErrorCode.Config, "No active cluster in the Kubernetes configuration.");
  const timeoutMs = options.timeoutMs ?? DEFAULT_KUBE_TIMEOUT_MS;
  // The kubeconfig's pooled connections and credentials (`./transport.ts`), metadata only.
  const api = new ResourceApi(kc, timeoutMs);
  const metadataWatch = watchConfig(kc, ACCEPT_METADATA_WATCH);
  return {
    async list() {
      const items: NamespaceMeta[] = [];
      let cont: string | undefined;
      let resourceVersion = "";
      do {
        let page;
        try {
          page = await api.getJson(
            "/api/v1/namespaces",
            { limit: String(options.pageSize ?? 500), continue: cont },
            ACCEPT_METADATA_LIST,
          );
        } catch (err) {
          throw mapKubeError(err, { verb: "list", resource: "namespaces" }, cluster.server, timeoutMs);
        }
        for (const n of jsonArray(page.items)) items.push(toMeta(n));
        // The revision of the first page is the list's (every later page is served from it).
        if (resourceVersion === "") resourceVersion = str(obj(page.metadata).resourceVersion);
        cont = optStr(obj(page.metadata).continue);
      } while (cont !== undefined);
      return { items, resourceVersion };
    },
    async watch(resourceVersion, timeoutSeconds, onEvent, onEnd) {
      const controller = await new Watch(metadataWatch).watch(
        "/api/v1/namespaces",
        {
          allowWatchBookmarks: true,
          timeoutSeconds,
          ...(resourceVersion !== "" ? { resourceVersion } : {}),
        },
        (type: string, object: unknown) => {
          if (type === "BOOKMARK") {
            onEvent({ type, resourceVersion: str(obj(obj(object).metadata).resourceVersion) });
          } else if (type === "ERROR") {
            const o = obj(object);
            onEvent({
              type,
              code: typeof o.code === "number" ? o.code : 0,
              message: typeof o.message === "string" ? o.message : "watch error",
            });
          } else if (type === "ADDED" || type === "MODIFIED" || type === "DELETED") {
            onEvent({ type, namespace: toMeta(object) });
          }
        },
        (err: unknown) => onEnd(err ?? undefined),
      );
      return () => controller.abort();
    },
  };
}
