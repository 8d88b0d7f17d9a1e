/**
 * Generated OpenAPI v3 documents. kubectl `create`/`apply` read `/openapi/v3`, then the
 * group-version document; when the item path's PATCH operation carries the matching
 * `x-kubernetes-group-version-kind` and a `fieldValidation` query parameter, kubectl switches to
 * server-side field validation (`?fieldValidation=Strict`) and needs nothing else. Schemas are
 * permissive: this server validates names, not fields.
 */
import { apiVersionOf, storageHash, type ResourceDef } from "./registry.js";

function gvPath(group: string, version: string): string {
  return group === "" ? `api/${version}` : `apis/${group}/${version}`;
}

/** `/openapi/v3`: the index of group-version documents. */
export function openApiIndex(
  groupVersions: readonly { group: string; version: string }[],
  defs: readonly ResourceDef[],
) {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const { group, version } of groupVersions) {
    const p = gvPath(group, version);
    const hash = storageHash(JSON.stringify(defs.filter((d) => d.group === group && d.version === version)));
    paths[p] = { serverRelativeURL: `/openapi/v3/${p}?hash=${hash}` };
  }
  return { paths };
}

function schemaName(d: ResourceDef): string {
  const g = d.group === "" ? "core" : d.group;
  return `io.k8s.sim.${g}.${d.version}.${d.kind}`;
}

/** The document for one group-version. */
export function openApiGroupVersion(defs: readonly ResourceDef[], group: string, version: string) {
  const paths: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {};
  const param = (name: string, where: "query" | "path") => ({
    name,
    in: where,
    ...(where === "path" ? { required: true } : {}),
    schema: { type: where === "query" && name === "limit" ? "integer" : "string", uniqueItems: true },
  });
  const queryParams = ["dryRun", "fieldManager", "fieldValidation", "pretty"].map((n) => param(n, "query"));
  for (const d of defs.filter((x) => x.group === group && x.version === version)) {
    const gvk = { group: d.group, version: d.version, kind: d.kind };
    const ref = { $ref: `#/components/schemas/${schemaName(d)}` };
    const body = { content: { "application/json": { schema: ref } }, required: true };
    const ok = { "200": { description: "OK", content: { "application/json": { schema: ref } } } };
    const op = (action: string, extra: Record<string, unknown> = {}) => ({
      operationId: `${action}${d.kind}`,
      "x-kubernetes-action": action,
      "x-kubernetes-group-version-kind": gvk,
      parameters: queryParams,
      responses: ok,
      ...extra,
    });
    const base = `/${gvPath(group, version)}${d.namespaced ? "/namespaces/{namespace}" : ""}/${d.resource}`;
    const scopeParams = d.namespaced ? [param("namespace", "path")] : [];
    paths[base] = {
      parameters: scopeParams,
      get: {
        ...op("list"),
        parameters: ["labelSelector", "fieldSelector", "limit", "continue", "resourceVersion", "watch"].map(
          (n) => param(n, "query"),
        ),
      },
      post: op("post", { requestBody: body }),
    };
    const patchBody = {
      content: Object.fromEntries(
        // No strategic-merge-patch here: kubectl would then compute apply patches from these
        // permissive schemas; without it, it uses its compiled-in patch metadata (merge keys).
        ["application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json"].map(
          (t) => [t, { schema: { type: "object" } }],
        ),
      ),
      required: true,
    };
    paths[`${base}/{name}`] = {
      parameters: [...scopeParams, param("name", "path")],
      get: op("get"),
      put: op("put", { requestBody: body }),
      patch: op("patch", { requestBody: patchBody, parameters: [...queryParams, param("force", "query")] }),
      delete: op("delete"),
    };
    schemas[schemaName(d)] = {
      type: "object",
      description: `${d.kind} (${apiVersionOf(d)}), simulated`,
      properties: {
        apiVersion: { type: "string" },
        kind: { type: "string" },
        metadata: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
      },
      "x-kubernetes-preserve-unknown-fields": true,
      "x-kubernetes-group-version-kind": [gvk],
    };
  }
  return {
    openapi: "3.0.0",
    info: { title: "Kubernetes", version: "v1.32.0" },
    paths,
    components: { schemas },
  };
}
