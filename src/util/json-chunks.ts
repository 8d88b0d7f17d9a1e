/**
 * A value's compact JSON in pieces of about `size` characters, whose concatenation is exactly
 * `JSON.stringify(value)`. The `--json` answer for a namespace of thousands of objects is megabytes:
 * made whole, it is held as one string, then copied flat, then encoded into one buffer, each new
 * memory the process must fault in. In pieces, each is written and dropped as the next is made.
 *
 * Only the spine is walked: the top-level object, and every object and array down to the long
 * arrays. An element of a long array (a blocker, say) is stringified whole, which is where
 * `JSON.stringify` is fastest. The one difference from `JSON.stringify`: a `toJSON` is called with
 * the key `""` rather than its own key or index (no value of ours reads it; `Date`'s ignores it).
 */

/** Arrays longer than this are written element by element; shorter ones, when under a long one, whole. */
const LONG = 32;

export function* jsonChunks(value: unknown, size = 64 * 1024): Generator<string, void, undefined> {
  let batch = "";
  for (const piece of pieces(value)) {
    batch += piece;
    if (batch.length >= size) {
      yield batch;
      batch = "";
    }
  }
  if (batch !== "") yield batch;
}

/** Walked as JSON.stringify would: no `toJSON` of its own, an array or a plain object. */
function walkable(value: unknown): value is Record<string, unknown> | unknown[] {
  if (typeof value !== "object" || value === null) return false;
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return false;
  if (Array.isArray(value)) return true;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function* pieces(value: unknown): Generator<string, void, undefined> {
  if (!walkable(value)) {
    const text = JSON.stringify(value);
    if (text !== undefined) yield text;
    return;
  }
  if (Array.isArray(value)) {
    const long = value.length > LONG;
    yield "[";
    for (let i = 0; i < value.length; i++) {
      if (i > 0) yield ",";
      const element: unknown = value[i];
      if (long && !(Array.isArray(element) && element.length > LONG)) yield JSON.stringify(element) ?? "null";
      else if (walkable(element)) yield* pieces(element);
      else yield JSON.stringify(element) ?? "null";
    }
    yield "]";
    return;
  }
  yield "{";
  let first = true;
  for (const key of Object.keys(value)) {
    const member = value[key];
    let text: string | undefined;
    if (!walkable(member)) {
      // What JSON.stringify leaves out of an object: undefined, functions, symbols.
      text = JSON.stringify(member);
      if (text === undefined) continue;
    }
    yield `${first ? "" : ","}${JSON.stringify(key)}:`;
    first = false;
    if (text !== undefined) yield text;
    else yield* pieces(member);
  }
  yield "}";
}
