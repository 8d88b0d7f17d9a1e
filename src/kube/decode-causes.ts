/**
 * Decoders for what the diagnosis reads to name a namespace's deeper causes: admission webhook
 * configurations, Nodes and pods' placement. Raw JSON in, the port's plain snapshots out.
 */
import { jsonArray, obj, optStr, str, type Json } from "./decode.js";
import type { AdmissionWebhookSnapshot, NodeSnapshot, PodPlacementSnapshot } from "./port.js";

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

export function toAdmissionWebhooks(
  config: Json,
  configurationKind: AdmissionWebhookSnapshot["configurationKind"],
): AdmissionWebhookSnapshot[] {
  const configuration = str(obj(config.metadata).name);
  return jsonArray(config.webhooks).map((w) => {
    const clientConfig = obj(w.clientConfig);
    const svc = obj(clientConfig.service);
    const url = optStr(clientConfig.url);
    return {
      configuration,
      configurationKind,
      name: str(w.name),
      failurePolicy: optStr(w.failurePolicy) ?? "Fail",
      ...(typeof svc.name === "string" && typeof svc.namespace === "string"
        ? {
            service: {
              namespace: svc.namespace,
              name: svc.name,
              ...(typeof svc.port === "number" ? { port: svc.port } : {}),
            },
          }
        : {}),
      ...(url !== undefined ? { url } : {}),
      rules: jsonArray(w.rules).map((r) => ({
        operations: strings(r.operations),
        apiGroups: strings(r.apiGroups),
        resources: strings(r.resources),
      })),
    };
  });
}

export function toNodeSnapshot(node: Json): NodeSnapshot {
  const status = obj(node.status);
  const spec = obj(node.spec);
  const ready = jsonArray(status.conditions).find((c) => c.type === "Ready");
  return {
    name: str(obj(node.metadata).name),
    ...(ready !== undefined
      ? {
          ready: {
            status: str(ready.status),
            ...(optStr(ready.reason) !== undefined ? { reason: optStr(ready.reason) } : {}),
            ...(optStr(ready.message) !== undefined ? { message: optStr(ready.message) } : {}),
            ...(optStr(ready.lastTransitionTime) !== undefined
              ? { lastTransitionTime: optStr(ready.lastTransitionTime) }
              : {}),
          },
        }
      : {}),
    unschedulable: spec.unschedulable === true,
    taints: jsonArray(spec.taints).map((t) => `${str(t.key)}:${str(t.effect)}`),
  };
}

export function toPodPlacement(pod: Json): PodPlacementSnapshot {
  const meta = obj(pod.metadata);
  const spec = obj(pod.spec);
  const nodeName = optStr(spec.nodeName);
  const deletionTimestamp = optStr(meta.deletionTimestamp);
  const grace = meta.deletionGracePeriodSeconds;
  return {
    namespace: str(meta.namespace),
    name: str(meta.name),
    ...(nodeName !== undefined && nodeName !== "" ? { nodeName } : {}),
    phase: str(obj(pod.status).phase),
    ...(deletionTimestamp !== undefined ? { deletionTimestamp } : {}),
    ...(typeof grace === "number" ? { deletionGracePeriodSeconds: grace } : {}),
    finalizers: strings(meta.finalizers),
    claims: jsonArray(spec.volumes).flatMap((v) => {
      const c = optStr(obj(v.persistentVolumeClaim).claimName);
      return c !== undefined ? [c] : [];
    }),
  };
}
