/**
 * The one JSON patch that removes finalizers from an object pinned at an approved state. The
 * approval request shows exactly this patch and the adapter sends exactly this patch: its `test`
 * operations make the API server refuse it if the object moved on since approval.
 */

/** RFC 6902 operations, as sent to the API server. */
export type JsonPatchOp =
  | { readonly op: "test"; readonly path: string; readonly value: unknown }
  | { readonly op: "replace"; readonly path: string; readonly value: unknown }
  | { readonly op: "remove"; readonly path: string };

export function buildFinalizerPatch(
  precondition: { readonly resourceVersion: string; readonly finalizers: readonly string[] },
  remove: readonly string[],
): JsonPatchOp[] {
  const remaining = precondition.finalizers.filter((f) => !remove.includes(f));
  return [
    { op: "test", path: "/metadata/resourceVersion", value: precondition.resourceVersion },
    { op: "test", path: "/metadata/finalizers", value: [...precondition.finalizers] },
    remaining.length === 0
      ? { op: "remove", path: "/metadata/finalizers" }
      : { op: "replace", path: "/metadata/finalizers", value: remaining },
  ];
}
