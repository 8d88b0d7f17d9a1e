/** Reading posted Block Kit in tests. */

/** The `value` of the button with `actionId` anywhere in a Block Kit structure. */
export function buttonValue(blocks: unknown, actionId: string): string | undefined {
  if (Array.isArray(blocks)) {
    for (const b of blocks) {
      const v = buttonValue(b, actionId);
      if (v !== undefined) return v;
    }
  } else if (blocks && typeof blocks === "object") {
    const o = blocks as Record<string, unknown>;
    if (o.action_id === actionId && typeof o.value === "string") return o.value;
    for (const v of Object.values(o)) {
      const found = buttonValue(v, actionId);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}
