/**
 * The one JSON patch that sets or removes one annotation of an object pinned at the state it was
 * read in: `test` of its uid (a re-created object of the same name is refused) and of its
 * resourceVersion (so the annotations the caller read are exactly those the patch applies to),
 * then the one operation the change needs. RFC 6902 `add` on a missing parent fails, so an object
 * read without annotations gets the whole map.
 */
import type { NamespaceAnnotationPrecondition } from "./port.js";
import type { JsonPatchOp } from "./finalizer-patch.js";

/** RFC 6901: `~` → `~0`, `/` → `~1` (annotation keys carry a `/`). */
export function jsonPointerToken(key: string): string {
  return key.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** The operations that make `key` equal `value` (or absent, for `null`); `add` replaces a member. */
export function buildAnnotationPatch(
  seen: NamespaceAnnotationPrecondition,
  key: string,
  value: string | null,
): (JsonPatchOp | { readonly op: "add"; readonly path: string; readonly value: unknown })[] {
  const pins: JsonPatchOp[] = [
    { op: "test", path: "/metadata/uid", value: seen.uid },
    { op: "test", path: "/metadata/resourceVersion", value: seen.resourceVersion },
  ];
  const path = `/metadata/annotations/${jsonPointerToken(key)}`;
  if (value === null) {
    // Nothing to remove: the pins alone confirm the object is still the one read.
    return key in seen.annotations ? [...pins, { op: "remove", path }] : pins;
  }
  if (Object.keys(seen.annotations).length === 0) {
    return [...pins, { op: "add", path: "/metadata/annotations", value: { [key]: value } }];
  }
  return [...pins, { op: "add", path, value }];
}
