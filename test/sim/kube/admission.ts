/**
 * Dynamic admission on DELETE, after kube-apiserver's webhook dispatchers
 * (k8s.io/apiserver/pkg/admission/plugin/webhook): every MutatingWebhookConfiguration, then every
 * ValidatingWebhookConfiguration, whose rules match the operation `DELETE` on the object's
 * group/version/resource and scope, and whose `namespaceSelector` / `objectSelector` match, is
 * called. The simulator cannot run a webhook server, so a call succeeds (the webhook allows) when
 * its Service exists and has a ready endpoint; otherwise the call fails as the API server's endpoint
 * service resolver reports it, and with `failurePolicy: Fail` (the v1 default) the request is
 * refused with a 500 `InternalError`:
 *
 *   Internal error occurred: failed calling webhook "<webhook>": failed to call webhook: Post
 *   "https://<svc>.<ns>.svc:<port><path>?timeout=<n>s": service "<svc>" not found
 *
 * (`no endpoints available for service "<svc>"` when the Service is there but nothing is ready).
 * A webhook given by `clientConfig.url` is taken to answer and allow. Objects of
 * `admissionregistration.k8s.io` are never sent to webhooks (the API server exempts them, so a
 * broken configuration can always be deleted).
 */
import { isRecord, type KubeObject } from "./object.js";
import type { ResourceDef } from "./registry.js";
import { internalError } from "./status.js";
import type { SimStore } from "./store.js";

type Json = Record<string, unknown>;

function rec(v: unknown): Json {
  return isRecord(v) ? v : {};
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

/** metav1.LabelSelector against a label set; an absent or empty selector matches everything. */
export function labelSelectorMatches(selector: unknown, labels: Readonly<Record<string, string>>): boolean {
  const s = rec(selector);
  for (const [k, v] of Object.entries(rec(s.matchLabels))) if (labels[k] !== v) return false;
  for (const e of Array.isArray(s.matchExpressions) ? s.matchExpressions : []) {
    const x = rec(e);
    const key = typeof x.key === "string" ? x.key : "";
    const values = strings(x.values);
    const has = Object.hasOwn(labels, key);
    switch (x.operator) {
      case "In":
        if (!has || !values.includes(labels[key] ?? "")) return false;
        break;
      case "NotIn":
        if (has && values.includes(labels[key] ?? "")) return false;
        break;
      case "Exists":
        if (!has) return false;
        break;
      case "DoesNotExist":
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

function ruleMatches(rule: Json, d: ResourceDef, operation: string): boolean {
  const ops = strings(rule.operations);
  if (!ops.includes("*") && !ops.includes(operation)) return false;
  const groups = strings(rule.apiGroups);
  if (!groups.includes("*") && !groups.includes(d.group)) return false;
  const versions = strings(rule.apiVersions);
  if (!versions.includes("*") && !versions.includes(d.version)) return false;
  const resources = strings(rule.resources);
  // `*` is every resource (not its subresources), `*/*` every resource and subresource.
  if (!resources.some((r) => r === "*" || r === "*/*" || r === d.resource || r === `${d.resource}/*`))
    return false;
  const scope = typeof rule.scope === "string" ? rule.scope : "*";
  if (scope === "Namespaced" && !d.namespaced) return false;
  if (scope === "Cluster" && d.namespaced) return false;
  return true;
}

/** The labels `namespaceSelector` is matched against: the object's namespace (or a Namespace's own). */
function namespaceLabels(store: SimStore, d: ResourceDef, obj: KubeObject): Record<string, string> | null {
  if (d.group === "" && d.resource === "namespaces") return obj.metadata?.labels ?? {};
  if (!d.namespaced) return null;
  const ns = store.get("v1", "Namespace", undefined, obj.metadata?.namespace ?? "");
  return ns?.metadata?.labels ?? {};
}

/** Whether the Service has an address ready to take the call: EndpointSlices first, else Endpoints. */
export function serviceHasReadyEndpoint(store: SimStore, namespace: string, service: string): boolean {
  const slices = store
    .list("discovery.k8s.io/v1", "EndpointSlice", namespace)
    .filter((s) => s.metadata?.labels?.["kubernetes.io/service-name"] === service);
  if (slices.length > 0) {
    return slices.some((s) =>
      (Array.isArray(s.endpoints) ? s.endpoints : []).some(
        // An unset `ready` means ready (EndpointSlice API).
        (e) => rec(rec(e).conditions).ready !== false && strings(rec(e).addresses).length > 0,
      ),
    );
  }
  const ep = store.get("v1", "Endpoints", namespace, service);
  return (Array.isArray(ep?.subsets) ? ep.subsets : []).some(
    (s) => Array.isArray(rec(s).addresses) && (rec(s).addresses as unknown[]).length > 0,
  );
}

/** Why a call to the webhook's Service fails, as the endpoint resolver says it; `undefined`: it answers. */
function callFailure(store: SimStore, clientConfig: Json): string | undefined {
  const svc = rec(clientConfig.service);
  if (typeof svc.name !== "string" || typeof svc.namespace !== "string") return undefined;
  if (store.get("v1", "Service", svc.namespace, svc.name) === undefined)
    return `service "${svc.name}" not found`;
  if (!serviceHasReadyEndpoint(store, svc.namespace, svc.name))
    return `no endpoints available for service "${svc.name}"`;
  return undefined;
}

function webhookUrl(clientConfig: Json, timeoutSeconds: number): string {
  const svc = rec(clientConfig.service);
  const port = typeof svc.port === "number" ? svc.port : 443;
  const path = typeof svc.path === "string" ? svc.path : "";
  return `https://${String(svc.name)}.${String(svc.namespace)}.svc:${String(port)}${path}?timeout=${String(timeoutSeconds)}s`;
}

const CONFIG_KINDS = ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"] as const;

/**
 * Run the DELETE admission webhooks for `obj` (of type `d`); throws the API server's `InternalError`
 * when a matching webhook with `failurePolicy: Fail` cannot be called.
 */
export function admitDelete(store: SimStore, d: ResourceDef, obj: KubeObject): void {
  if (d.group === "admissionregistration.k8s.io") return;
  const nsLabels = namespaceLabels(store, d, obj);
  for (const kind of CONFIG_KINDS) {
    for (const config of store.list("admissionregistration.k8s.io/v1", kind)) {
      for (const raw of Array.isArray(config.webhooks) ? config.webhooks : []) {
        const w = rec(raw);
        const rules = (Array.isArray(w.rules) ? w.rules : []).map(rec);
        if (!rules.some((r) => ruleMatches(r, d, "DELETE"))) continue;
        if (nsLabels !== null && !labelSelectorMatches(w.namespaceSelector, nsLabels)) continue;
        if (!labelSelectorMatches(w.objectSelector, obj.metadata?.labels ?? {})) continue;
        const clientConfig = rec(w.clientConfig);
        const failure = callFailure(store, clientConfig);
        if (failure === undefined) continue;
        if (w.failurePolicy === "Ignore") continue;
        const timeout = typeof w.timeoutSeconds === "number" ? w.timeoutSeconds : 10;
        throw internalError(
          `failed calling webhook "${String(w.name)}": failed to call webhook: Post "${webhookUrl(clientConfig, timeout)}": ${failure}`,
        );
      }
    }
  }
}
