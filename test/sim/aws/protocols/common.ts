/**
 * What every protocol module shares: the parsed request, the result shape, form decoding and the
 * opaque pagination tokens.
 */
import type { IncomingHttpHeaders } from "node:http";
import { AwsApiError } from "../errors.js";

/** One decoded HTTP request, after routing picked the service. */
export interface ServiceRequest {
  readonly action: string;
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** Form fields for the query and ec2 protocols (`Names.member.1` → value). */
  readonly form: Map<string, string>;
  readonly requestId: string;
}

/** A successful response. */
export interface ServiceResult {
  readonly status?: number;
  readonly headers?: Record<string, string>;
  readonly body: string;
}

/** What CloudTrail records about a mutating call, computed from the request before it runs. */
export interface TrailInfo {
  readonly requestParameters: Record<string, unknown> | null;
  readonly resources: { ResourceType: string; ResourceName: string }[];
}

export function parseForm(body: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of new URLSearchParams(body)) out.set(k, v);
  return out;
}

/** `prefix.1`, `prefix.2`, … in index order. */
export function formList(form: Map<string, string>, prefix: string): string[] {
  const items: [number, string][] = [];
  for (const [k, v] of form) {
    const m = k.startsWith(`${prefix}.`) ? /^(\d+)$/.exec(k.slice(prefix.length + 1)) : null;
    if (m) items.push([Number(m[1]), v]);
  }
  return items.sort((a, b) => a[0] - b[0]).map(([, v]) => v);
}

/** `prefix.N.rest` grouped by N into sub-forms keyed by `rest`. */
export function formStructs(form: Map<string, string>, prefix: string): Map<string, string>[] {
  const groups = new Map<number, Map<string, string>>();
  for (const [k, v] of form) {
    if (!k.startsWith(`${prefix}.`)) continue;
    const m = /^(\d+)\.(.+)$/.exec(k.slice(prefix.length + 1));
    if (!m) continue;
    const n = Number(m[1]);
    const g = groups.get(n) ?? new Map<string, string>();
    g.set(m[2] ?? "", v);
    groups.set(n, g);
  }
  return [...groups.entries()].sort((a, b) => a[0] - b[0]).map(([, g]) => g);
}

export function formInt(form: Map<string, string>, key: string): number | undefined {
  const v = form.get(key);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n))
    throw new AwsApiError("ValidationError", `Value '${v}' at '${key}' is not an integer`);
  return n;
}

/** An opaque, URL-safe token for "continue at offset N" (real tokens are opaque too). */
export function encodeToken(offset: number, kind: string): string {
  return Buffer.from(JSON.stringify({ k: kind, o: offset })).toString("base64");
}

export function decodeToken(token: string | undefined, kind: string, code: string, message: string): number {
  if (token === undefined || token === "") return 0;
  try {
    const parsed = JSON.parse(Buffer.from(token, "base64").toString("utf8")) as { k?: unknown; o?: unknown };
    if (parsed.k === kind && typeof parsed.o === "number" && parsed.o >= 0) return parsed.o;
  } catch {
    // fall through to the service's own error
  }
  throw new AwsApiError(code, message);
}

const compiled = new Map<string, RegExp>();

/** EC2-style wildcard match: `*` any run, `?` one character, everything else literal. */
export function wildcard(pattern: string, value: string): boolean {
  // A filter of 200 values over thousands of items: compare literals directly, compile a
  // pattern once.
  if (!pattern.includes("*") && !pattern.includes("?")) return pattern === value;
  let re = compiled.get(pattern);
  if (re === undefined) {
    const source = pattern
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*/g, ".*")
      .replace(/\?/g, ".");
    re = new RegExp(`^${source}$`, "s");
    if (compiled.size > 10_000) compiled.clear();
    compiled.set(pattern, re);
  }
  return re.test(value);
}
