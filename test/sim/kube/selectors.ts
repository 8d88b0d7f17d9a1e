/**
 * Label and field selectors with the grammar of k8s.io/apimachinery `labels.Parse` and
 * `fields.ParseSelector`: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`.
 */
import { badRequest } from "./status.js";
import { getPath, type KubeObject } from "./object.js";

type Requirement =
  | { op: "eq" | "neq"; key: string; value: string }
  | { op: "in" | "notin"; key: string; values: string[] }
  | { op: "exists" | "notexists"; key: string };

/** Splits on commas that are not inside a `( … )` value set. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of text) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      parts.push(cur);
      cur = "";
    } else cur += ch;
  }
  parts.push(cur);
  return parts.map((p) => p.trim()).filter((p) => p !== "");
}

const SET_RE = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/;

export function parseLabelSelector(text: string): Requirement[] {
  const reqs: Requirement[] = [];
  for (const part of splitTopLevel(text)) {
    const set = SET_RE.exec(part);
    if (set !== null) {
      const values = (set[3] ?? "")
        .split(",")
        .map((v) => v.trim())
        .filter((v) => v !== "");
      reqs.push({ op: set[2] === "in" ? "in" : "notin", key: set[1] ?? "", values });
      continue;
    }
    const m = /^([^!=\s]+)\s*(==|!=|=)\s*(\S*)$/.exec(part);
    if (m !== null) {
      reqs.push({ op: m[2] === "!=" ? "neq" : "eq", key: m[1] ?? "", value: m[3] ?? "" });
      continue;
    }
    if (/^![^!=\s]+$/.test(part)) {
      reqs.push({ op: "notexists", key: part.slice(1) });
      continue;
    }
    if (/^[^!=\s(),]+$/.test(part)) {
      reqs.push({ op: "exists", key: part });
      continue;
    }
    throw badRequest(`unable to parse requirement: found '${part}', expected: in, notin, =, ==, !=, gt, lt`);
  }
  return reqs;
}

function matches(reqs: Requirement[], get: (key: string) => string | undefined): boolean {
  return reqs.every((r) => {
    const v = get(r.key);
    switch (r.op) {
      case "eq":
        return v === r.value;
      case "neq":
        return v !== r.value;
      case "in":
        return v !== undefined && r.values.includes(v);
      case "notin":
        return v === undefined || !r.values.includes(v);
      case "exists":
        return v !== undefined;
      case "notexists":
        return v === undefined;
    }
  });
}

/** A compiled selector pair; `undefined` text matches everything. */
export function compileSelectors(
  labelSelector: string | undefined,
  fieldSelector: string | undefined,
  supportedFields: readonly string[],
): (obj: KubeObject) => boolean {
  const labels = labelSelector !== undefined && labelSelector !== "" ? parseLabelSelector(labelSelector) : [];
  const fields = fieldSelector !== undefined && fieldSelector !== "" ? parseLabelSelector(fieldSelector) : [];
  for (const f of fields) {
    if (f.op !== "eq" && f.op !== "neq") {
      throw badRequest(`invalid selector: '${fieldSelector ?? ""}'; can't understand '${f.key}'`);
    }
    if (!supportedFields.includes(f.key)) {
      throw badRequest(`field label not supported: ${f.key}`);
    }
  }
  return (obj) =>
    matches(labels, (k) => obj.metadata?.labels?.[k]) &&
    matches(fields, (k) => {
      const v = getPath(obj, k);
      if (v === undefined || v === null) return "";
      return typeof v === "string"
        ? v
        : typeof v === "number" || typeof v === "boolean"
          ? String(v)
          : JSON.stringify(v);
    });
}

/** Field selectors the real server supports per resource (beyond metadata.name/namespace). */
export function supportedFieldSelectors(group: string, resource: string): string[] {
  const base = ["metadata.name", "metadata.namespace"];
  if (group === "" && resource === "events") {
    return [
      ...base,
      "involvedObject.kind",
      "involvedObject.namespace",
      "involvedObject.name",
      "involvedObject.uid",
      "involvedObject.apiVersion",
      "involvedObject.resourceVersion",
      "involvedObject.fieldPath",
      "reason",
      "reportingComponent",
      "source",
      "type",
    ];
  }
  if (group === "" && resource === "pods") {
    return [
      ...base,
      "spec.nodeName",
      "spec.restartPolicy",
      "spec.schedulerName",
      "spec.serviceAccountName",
      "status.phase",
      "status.podIP",
      "status.nominatedNodeName",
    ];
  }
  if (group === "" && resource === "namespaces") return [...base, "status.phase"];
  if (group === "" && resource === "secrets") return [...base, "type"];
  return base;
}
