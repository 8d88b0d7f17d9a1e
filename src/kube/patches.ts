/**
 * The adapter's writes: JSON patches whose `test` operations make the API server itself refuse a
 * change to an object that moved on since it was read (no read-check-write race). Each is sent
 * once ({@link patchOnce}): after an ambiguous failure the caller re-reads before another.
 */
import { ErrorCode, UnstuckError } from "../errors.js";
import { buildAnnotationPatch } from "./annotation-patch.js";
import { buildAnnotationRemovalIf } from "./annotation-removal.js";
import { toNamespaceSnapshot, toObjectSnapshot } from "./decode.js";
import { type CallContext, isPreconditionRefusal } from "./errors.js";
import { buildFinalizerPatch } from "./finalizer-patch.js";
import type { NamespaceAnnotationPrecondition, WriteContext } from "./port.js";
import { type KubeRequests, namespacePath, patchOnce, resourcePath } from "./requests.js";
import type { NamespaceSnapshot, ObjectSnapshot, ResourceType } from "./types.js";

/**
 * Set or remove one annotation of a namespace as it was read (`KubePort.annotateNamespace`);
 * a namespace that changed since is `Stale`.
 */
export async function annotateNamespace(
  k: KubeRequests,
  name: string,
  key: string,
  value: string | null,
  seen: NamespaceAnnotationPrecondition,
  write?: WriteContext,
): Promise<NamespaceSnapshot> {
  const ctx: CallContext = { verb: "patch", resource: "namespaces", name };
  const ops = buildAnnotationPatch(seen, key, value);
  try {
    // One attempt, like the finalizer patch: after an ambiguous failure the caller re-reads.
    return toNamespaceSnapshot(await patchOnce(k, ctx, namespacePath(name), ops, write));
  } catch (err) {
    if (isPreconditionRefusal(err)) {
      throw new UnstuckError(
        ErrorCode.Stale,
        `Namespace ${name} changed since it was read; the API server refused the patch: ${err.message}`,
        { ...err.details },
        { cause: err },
      );
    }
    throw err;
  }
}

/**
 * Remove one annotation while it still has the value expected (`KubePort.removeNamespaceAnnotation`):
 * `removed`, `changed` (nothing written) or `gone` (no such namespace).
 */
export async function removeNamespaceAnnotation(
  k: KubeRequests,
  name: string,
  key: string,
  expected: { readonly uid: string; readonly value: string },
  write?: WriteContext,
): Promise<"removed" | "changed" | "gone"> {
  const ctx: CallContext = { verb: "patch", resource: "namespaces", name };
  const ops = buildAnnotationRemovalIf(key, expected);
  try {
    // One attempt: the caller (a periodic loop, a retried job) reads again before another.
    await patchOnce(k, ctx, namespacePath(name), ops, write);
    return "removed";
  } catch (err) {
    if (err instanceof UnstuckError && err.code === ErrorCode.NotFound) return "gone";
    // A `test` that failed: the namespace or the value is not the one read.
    if (isPreconditionRefusal(err)) return "changed";
    throw err;
  }
}

/**
 * Remove finalizers from one object in the approved state (`KubePort.removeFinalizers`); an object
 * that changed after approval is `Stale`.
 */
export async function removeFinalizers(
  k: KubeRequests,
  type: ResourceType,
  namespace: string,
  name: string,
  precondition: { readonly resourceVersion: string; readonly finalizers: readonly string[] },
  remove: readonly string[],
  write?: WriteContext,
): Promise<ObjectSnapshot> {
  const ctx: CallContext = { verb: "patch", resource: type.resource, group: type.group, namespace, name };
  // The same patch the approval request showed; its `test` operations make the API server
  // itself refuse it if the object moved on since that state: no read-check-write race.
  const ops = buildFinalizerPatch(precondition, remove);
  try {
    // One attempt, never `callKube`'s retries: after a 5xx or a reset the write may have been
    // applied, and only the executor, re-reading the object, may decide what to do next.
    return toObjectSnapshot(await patchOnce(k, ctx, resourcePath(type, namespace, name), ops, write), type);
  } catch (err) {
    if (isPreconditionRefusal(err)) {
      throw new UnstuckError(
        ErrorCode.Stale,
        `${type.kind} ${namespace}/${name} changed after approval; the API server refused the patch: ${err.message}`,
        { ...err.details },
        { cause: err },
      );
    }
    throw err;
  }
}
