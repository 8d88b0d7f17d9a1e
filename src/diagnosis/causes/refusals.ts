/**
 * The namespace controller's deletes refused (`NamespaceDeletionContentFailure`): by an admission
 * webhook it cannot call — named with its configuration, Service and endpoints — or otherwise,
 * verbatim.
 */
import type { AdmissionWebhookSnapshot } from "../../kube/port.js";
import type { NamespaceSnapshot } from "../../kube/types.js";
import type { DiagnosisRemedy } from "../types.js";
import { namespaceRule, trueCondition, type LinkOf } from "./rule.js";

/** Webhook names an API server error quotes: `failed calling webhook "x"`, `admission webhook "x" denied`. */
export function webhooksNamedIn(message: string): string[] {
  const names = [...message.matchAll(/(?:failed calling webhook|admission webhook) "([^"]+)"/g)].map(
    (m) => m[1] ?? "",
  );
  return [...new Set(names)].filter((n) => n !== "");
}

function interceptsDelete(w: AdmissionWebhookSnapshot): boolean {
  return w.rules.some((r) => r.operations.includes("DELETE") || r.operations.includes("*"));
}

const CONTENT_FAILURE = "NamespaceDeletionContentFailure";

/** The refusal names webhooks: read their configurations. */
const namesWebhooks = (ns: NamespaceSnapshot): boolean =>
  webhooksNamedIn(trueCondition(ns, CONTENT_FAILURE) ?? "").length > 0;

type Refusal = LinkOf<"delete-refused-by-webhook" | "delete-refused">;

export const deleteRefused = namespaceRule<"delete-refused-by-webhook" | "delete-refused">({
  kinds: ["delete-refused-by-webhook", "delete-refused"],
  needs: [{ read: "webhooks", when: namesWebhooks }],
  stage: "recover",
  find: (f) => {
    const message = trueCondition(f.ns, CONTENT_FAILURE);
    if (message === undefined) return [];
    const detail = message.replace(/^Failed to delete all resource types, \d+ remaining: /, "");
    const out: Refusal[] = [];
    const named = webhooksNamedIn(detail);
    for (const name of named) {
      const found = (f.reads?.webhooks ?? []).filter((w) => w.webhook.name === name);
      for (const { webhook: w, serviceExists, readyEndpoints } of found) {
        out.push({
          kind: "delete-refused-by-webhook",
          message: detail,
          webhook: {
            configuration: w.configuration,
            configurationKind: w.configurationKind,
            webhook: w.name,
            failurePolicy: w.failurePolicy,
            interceptsDelete: interceptsDelete(w),
            ...(w.service ? { service: `${w.service.namespace}/${w.service.name}` } : {}),
            ...(serviceExists !== undefined ? { serviceExists } : {}),
            ...(readyEndpoints !== undefined ? { readyEndpoints } : {}),
          },
        });
      }
      if (found.length === 0) out.push({ kind: "delete-refused", message: detail });
    }
    if (named.length > 0) return out;
    const leftovers = [
      ...detail.matchAll(
        /unexpected items still remain in namespace: \S+ for gvr: ([^,]*), Resource=([\w.-]+)/g,
      ),
    ];
    for (const m of leftovers) {
      const group = (m[1] ?? "").split("/")[0] ?? "";
      const resource = `${m[2] ?? ""}${group !== "" ? `.${group}` : ""}`;
      out.push({ kind: "delete-refused", message: m[0], resource });
    }
    if (out.length === 0) out.push({ kind: "delete-refused", message: detail });
    return out;
  },
  // The namespace controller retries, but nothing changes until the refusal is fixed.
  blocks: (links) => links.length > 0,
  remedies: (links) => {
    const steps: DiagnosisRemedy[] = [];
    const seen = new Set<string>();
    for (const c of links) {
      if (c.kind === "delete-refused-by-webhook") {
        const key = `${c.webhook.configurationKind}/${c.webhook.configuration}/${c.webhook.webhook}`;
        if (seen.has(key)) continue;
        seen.add(key);
        steps.push({ kind: "fix-webhook", webhook: c.webhook });
      } else {
        steps.push({
          kind: "find-refusal",
          message: c.message,
          ...(c.resource !== undefined ? { resource: c.resource } : {}),
        });
      }
    }
    return steps;
  },
});
