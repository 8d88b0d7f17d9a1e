/** Waiting for an approval request to reach a state in a store. */
import type { ApprovalRequest } from "../../src/requests/model.js";
import { eventually } from "./eventually.js";

/** Where a request ends when its execution has run (or will never run). */
export const SETTLED_STATES: readonly string[] = ["DONE", "FAILED", "STALE"];

/** Anything a request can be read back from by id (the approval store, a runtime's). */
export interface RequestReader {
  get(id: string): Promise<ApprovalRequest | null | undefined>;
}

/** Poll `store` until request `id` is in one of `states` (by default DONE/FAILED/STALE) and return it. */
export function requestSettled(
  store: RequestReader,
  id: string,
  states: readonly string[] = SETTLED_STATES,
  timeoutMs = 15_000,
): Promise<ApprovalRequest> {
  return eventually(
    async () => {
      const r = await store.get(id);
      return r && states.includes(r.state) ? r : undefined;
    },
    timeoutMs,
    `request ${id} in ${states.join("/")}`,
  );
}
