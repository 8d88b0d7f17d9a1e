/**
 * A value's compact JSON in pieces of `size` characters (the last one shorter; one more or less
 * where a cut would split a surrogate pair), whose concatenation is exactly
 * `JSON.stringify(value)`. The `--json` answer for a namespace of thousands of objects is megabytes:
 * made whole, it is held as one string, then copied flat, then encoded into one buffer, each new
 * memory the process must fault in. In pieces, each is written and dropped as the next is made.
 *
 * Only the spine is walked: the top-level object, and every object and array down to the long
 * arrays. The elements of a long array (blockers, say) are stringified {@link RUN} at a time, as one
 * array whose brackets are cut off: one call of `JSON.stringify` for many elements is where it is
 * fastest, and a few big pieces are fewer strings to join than one per element. The one difference
 * from `JSON.stringify`: a `toJSON` is called with the key `""`, or its index within its run, rather
 * than its own key or index (no value of ours reads it; `Date`'s ignores it).
 */

/** Arrays longer than this are written a run of elements at a time; shorter ones, when under a long one, whole. */
const LONG = 32;
/** Elements of a long array stringified together (~50 KB for a namespace's blockers). */
const RUN = 64;

export function* jsonChunks(value: unknown, size = 64 * 1024): Generator<string, void, undefined> {
  let batch = "";
  for (const piece of pieces(value)) {
    batch += piece;
    while (batch.length >= size) {
      // Never between the two halves of a surrogate pair: each piece is encoded on its own.
      let cut = size;
      if (isHighSurrogate(batch.charCodeAt(cut - 1))) cut = cut > 1 ? cut - 1 : cut + 1;
      yield batch.slice(0, cut);
      batch = batch.slice(cut);
    }
  }
  if (batch !== "") yield batch;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
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
    yield "[";
    if (value.length > LONG) yield* longArray(value);
    else
      for (let i = 0; i < value.length; i++) {
        if (i > 0) yield ",";
        const element: unknown = value[i];
        if (walkable(element)) yield* pieces(element);
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

/**
 * A long array's elements, without its brackets: runs of up to {@link RUN} elements stringified as
 * one array (an element that is itself a long array is walked in turn).
 */
function* longArray(value: readonly unknown[]): Generator<string, void, undefined> {
  let start = 0;
  while (start < value.length) {
    if (start > 0) yield ",";
    const element: unknown = value[start];
    if (Array.isArray(element) && element.length > LONG) {
      yield* pieces(element);
      start++;
      continue;
    }
    let end = start + 1;
    while (end < value.length && end - start < RUN) {
      const next: unknown = value[end];
      if (Array.isArray(next) && next.length > LONG) break;
      end++;
    }
    // `[a,b,c]` to `a,b,c`: a hole, undefined or a function is `null` in both.
    yield (JSON.stringify(value.slice(start, end)) ?? "[]").slice(1, -1);
    start = end;
  }
}
