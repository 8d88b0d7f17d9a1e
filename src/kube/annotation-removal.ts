/**
 * The JSON patch that removes one annotation only while it holds an exact value: `test` of the
 * object's uid (a re-created object of the same name is refused), `test` of the annotation's value,
 * then `remove`. Unlike `annotation-patch.ts` it is not pinned to a resourceVersion: an unrelated
 * change to the object (a label, another annotation) does not make it fail, and a new value written
 * meanwhile (a re-approval) is never removed — the `test` refuses the patch instead.
 */
import { jsonPointerToken } from "./annotation-patch.js";
import type { JsonPatchOp } from "./finalizer-patch.js";

export function buildAnnotationRemovalIf(
  key: string,
  expected: { readonly uid: string; readonly value: string },
): JsonPatchOp[] {
  const path = `/metadata/annotations/${jsonPointerToken(key)}`;
  return [
    { op: "test", path: "/metadata/uid", value: expected.uid },
    { op: "test", path, value: expected.value },
    { op: "remove", path },
  ];
}
