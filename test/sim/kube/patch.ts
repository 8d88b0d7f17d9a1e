/**
 * The three patch formats kubectl and client-node send: JSON merge patch (RFC 7386), JSON patch
 * (RFC 6902, with `test`), and the parts of strategic merge patch kubectl's client-side apply
 * and `kubectl patch` produce.
 */
import { badRequest, unprocessable } from "./status.js";
import { clone, deepEqual, isRecord } from "./object.js";

/** RFC 7386: objects merge recursively, `null` deletes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return clone(patch);
  const out: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) Reflect.deleteProperty(out, k);
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

interface JsonPatchOp {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

function unescape(token: string): string {
  return token.replace(/~1/g, "/").replace(/~0/g, "~");
}

function pointer(path: string): string[] {
  if (path === "") return [];
  if (!path.startsWith("/")) throw unprocessable(`JSON pointer must be empty or start with a "/": ${path}`);
  return path.slice(1).split("/").map(unescape);
}

type Container = Record<string, unknown> | unknown[];

/** Resolves the parent container of `path` and the final key. */
function parentOf(doc: unknown, tokens: string[], path: string): { parent: Container; key: string } {
  let cur: unknown = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[Number(t)];
    else if (isRecord(cur)) cur = cur[t];
    else cur = undefined;
    if (cur === undefined) throw unprocessable(`doc is missing path: "${path}": missing value`);
  }
  if (!Array.isArray(cur) && !isRecord(cur))
    throw unprocessable(`doc is missing path: "${path}": missing value`);
  return { parent: cur, key: tokens[tokens.length - 1] ?? "" };
}

function readPointer(doc: unknown, path: string): unknown {
  let cur: unknown = doc;
  for (const t of pointer(path)) {
    if (Array.isArray(cur)) cur = /^\d+$/.test(t) ? cur[Number(t)] : undefined;
    else if (isRecord(cur)) cur = Object.hasOwn(cur, t) ? cur[t] : undefined;
    else cur = undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

function arrayIndex(arr: unknown[], key: string, path: string, forAdd: boolean): number {
  if (forAdd && key === "-") return arr.length;
  if (!/^\d+$/.test(key))
    throw unprocessable(`Unable to access invalid index: ${key}: invalid index referenced`);
  const i = Number(key);
  if (i > arr.length || (!forAdd && i >= arr.length)) {
    throw unprocessable(`Unable to access invalid index: ${i}: invalid index referenced (${path})`);
  }
  return i;
}

function addAt(doc: unknown, path: string, value: unknown): unknown {
  const tokens = pointer(path);
  if (tokens.length === 0) return clone(value);
  const { parent, key } = parentOf(doc, tokens, path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, path, true), 0, clone(value));
  else parent[key] = clone(value);
  return doc;
}

function removeAt(doc: unknown, path: string): unknown {
  const tokens = pointer(path);
  const { parent, key } = parentOf(doc, tokens, path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, path, false), 1);
  else {
    if (!Object.hasOwn(parent, key))
      throw unprocessable(`Unable to remove nonexistent key: ${key}: missing value`);
    Reflect.deleteProperty(parent, key);
  }
  return doc;
}

/**
 * RFC 6902. Errors carry the messages of evanphx/json-patch (which the API server uses) for the
 * simulator's log; on the wire a patch that does not apply is the bare 422 of `unprocessable`.
 */
export function jsonPatch(target: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch))
    throw badRequest("json: cannot unmarshal object into Go value of type jsonpatch.Patch");
  let doc = clone(target);
  for (const raw of patch) {
    if (!isRecord(raw)) throw badRequest("invalid JSON patch operation");
    const op = raw as unknown as JsonPatchOp;
    switch (op.op) {
      case "add":
        doc = addAt(doc, op.path, op.value);
        break;
      case "remove":
        doc = removeAt(doc, op.path);
        break;
      case "replace": {
        if (readPointer(doc, op.path) === undefined && op.path !== "") {
          throw unprocessable(
            `replace operation does not apply: doc is missing key: ${op.path}: missing value`,
          );
        }
        doc = removeAt(doc, op.path);
        doc = addAt(doc, op.path, op.value);
        break;
      }
      case "move": {
        const v = readPointer(doc, op.from ?? "");
        if (v === undefined)
          throw unprocessable(
            `move operation does not apply: doc is missing from path: ${op.from ?? ""}: missing value`,
          );
        doc = removeAt(doc, op.from ?? "");
        doc = addAt(doc, op.path, v);
        break;
      }
      case "copy": {
        const v = readPointer(doc, op.from ?? "");
        if (v === undefined)
          throw unprocessable(
            `copy operation does not apply: doc is missing from path: ${op.from ?? ""}: missing value`,
          );
        doc = addAt(doc, op.path, v);
        break;
      }
      case "test": {
        const v = readPointer(doc, op.path);
        const expected = op.value === undefined ? null : op.value;
        if (!deepEqual(v === undefined ? null : v, expected)) {
          throw unprocessable(`testing value ${op.path} failed: test failed`);
        }
        break;
      }
      default:
        throw badRequest(`Unexpected kind: ${op.op}`);
    }
  }
  return doc;
}

/**
 * Merge keys of the list fields kubectl sends strategic patches for. Real strategic merge
 * reads them from the Go types; these cover the fields our scenarios and kubectl apply touch.
 */
const MERGE_KEYS: Record<string, string> = {
  containers: "name",
  initContainers: "name",
  ephemeralContainers: "name",
  env: "name",
  volumes: "name",
  volumeMounts: "mountPath",
  imagePullSecrets: "name",
  ownerReferences: "uid",
  conditions: "type",
  hostAliases: "ip",
  topologySpreadConstraints: "topologyKey",
};

/** Lists of scalars with `patchStrategy:"merge"` (set union), notably `metadata.finalizers`. */
const MERGE_SCALAR_LISTS = new Set(["finalizers"]);

function mergeKeyFor(field: string, items: unknown[]): string | undefined {
  if (field === "ports") {
    // Container ports merge on containerPort, Service ports on port.
    return items.some((i) => isRecord(i) && "containerPort" in i) ? "containerPort" : "port";
  }
  return MERGE_KEYS[field];
}

/**
 * Strategic merge patch for the cases kubectl produces: maps merge, `null` deletes, lists with a
 * known merge key merge element-wise (`$patch: delete` removes one), `finalizers` merges as a
 * set, other lists are replaced. `$setElementOrder/…`, `$retainKeys` and
 * `$deleteFromPrimitiveList/…` directives are honoured or tolerated.
 */
export function strategicMergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return clone(patch);
  if (patch.$patch === "replace") {
    const rest = { ...patch };
    delete rest.$patch;
    return clone(rest);
  }
  if (patch.$patch === "delete") return undefined;
  const out: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  const order: Record<string, unknown[]> = {};
  for (const [k, v] of Object.entries(patch)) {
    if (k === "$patch" || k === "$retainKeys") continue;
    if (k.startsWith("$setElementOrder/")) {
      if (Array.isArray(v)) order[k.slice("$setElementOrder/".length)] = v;
      continue;
    }
    if (k.startsWith("$deleteFromPrimitiveList/")) {
      const field = k.slice("$deleteFromPrimitiveList/".length);
      const cur = out[field];
      if (Array.isArray(cur) && Array.isArray(v))
        out[field] = cur.filter((x) => !v.some((d) => deepEqual(d, x)));
      continue;
    }
    if (v === null) {
      Reflect.deleteProperty(out, k);
      continue;
    }
    const cur = out[k];
    if (Array.isArray(v)) {
      out[k] = mergeList(k, Array.isArray(cur) ? cur : [], v);
      continue;
    }
    const merged = strategicMergePatch(cur, v);
    if (merged === undefined) Reflect.deleteProperty(out, k);
    else out[k] = merged;
  }
  for (const [field, wanted] of Object.entries(order)) {
    const cur = out[field];
    if (Array.isArray(cur)) out[field] = applyOrder(field, cur, wanted);
  }
  return out;
}

function mergeList(field: string, cur: unknown[], patch: unknown[]): unknown[] {
  if (patch.some((p) => isRecord(p) && p.$patch === "replace")) {
    return clone(patch.filter((p) => !(isRecord(p) && p.$patch === "replace")));
  }
  if (MERGE_SCALAR_LISTS.has(field) && patch.every((p) => !isRecord(p))) {
    const out = [...cur];
    for (const p of patch) if (!out.some((x) => deepEqual(x, p))) out.push(p);
    return out;
  }
  const key = mergeKeyFor(field, [...cur, ...patch]);
  if (key === undefined || !patch.every(isRecord)) return clone(patch);
  const out = cur.map((x) => clone(x));
  for (const p of patch) {
    const idx = out.findIndex((x) => isRecord(x) && deepEqual(x[key], p[key]));
    if (p.$patch === "delete") {
      if (idx >= 0) out.splice(idx, 1);
      continue;
    }
    if (idx >= 0) out[idx] = strategicMergePatch(out[idx], p);
    else out.push(strategicMergePatch({}, p));
  }
  return out;
}

function applyOrder(field: string, items: unknown[], wanted: unknown[]): unknown[] {
  const key = mergeKeyFor(field, items);
  const identity = (x: unknown): unknown => (key !== undefined && isRecord(x) ? x[key] : x);
  const rank = (x: unknown): number => {
    const i = wanted.findIndex((w) => deepEqual(identity(w), identity(x)));
    return i < 0 ? Number.MAX_SAFE_INTEGER : i;
  };
  return [...items].sort((a, b) => rank(a) - rank(b));
}
