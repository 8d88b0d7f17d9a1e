/**
 * Incident scenarios: one YAML file describes a whole situation for every simulator. Each
 * simulator reads its own section (`kube:` here; `aws:` and others belong to their simulators
 * and pass through untouched as `unknown`).
 *
 * Time values are written relative to the simulator's clock so a scenario stays fresh: a whole
 * string `now-32m` / `now+1h` / `now` becomes an RFC 3339 timestamp (seconds), and `{{now-31m}}`
 * inside a longer string (log lines) becomes an ISO timestamp with milliseconds.
 */
import { existsSync, readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";

/** A manifest as it appears in a scenario. */
export type ScenarioObject = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: Record<string, unknown> & { name: string; namespace?: string };
};

/** Log lines for one container; `pod` is `namespace/name`. */
export interface ScenarioLog {
  readonly pod: string;
  readonly container: string;
  readonly lines: readonly string[];
}

export interface KubeScenario {
  readonly objects: readonly ScenarioObject[];
  readonly logs: readonly ScenarioLog[];
  /** Group-versions whose discovery fails, e.g. `metrics.k8s.io/v1beta1`. */
  readonly failingGroups: readonly string[];
}

export interface ClusterInfo {
  readonly name: string;
  readonly region?: string;
  readonly accountId?: string;
}

/** A loaded scenario; unknown top-level sections are kept as they are. */
export interface Scenario {
  readonly name: string;
  readonly description?: string;
  readonly cluster?: ClusterInfo;
  readonly kube?: KubeScenario;
  readonly [section: string]: unknown;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const OFFSET = String.raw`(?:[+-]\d+(?:ms|s|m|h|d)(?:\d+(?:ms|s|m|h|d))*)*`;
const WHOLE = new RegExp(`^now(${OFFSET})$`);
const EMBEDDED = new RegExp(String.raw`\{\{\s*now(` + OFFSET + String.raw`)\s*\}\}`, "g");

/** Milliseconds of an offset like `-1h30m` (each term carries its sign or inherits the last). */
function offsetMs(expr: string): number {
  let total = 0;
  let sign = 1;
  for (const m of expr.matchAll(/([+-]?)(\d+)(ms|s|m|h|d)/g)) {
    if (m[1] === "-") sign = -1;
    else if (m[1] === "+") sign = 1;
    total += sign * Number(m[2]) * (UNIT_MS[m[3] ?? "s"] ?? 1000);
  }
  return total;
}

/** `now-32m` → `2026-02-12T08:38:47Z` against `now`; other strings unchanged except `{{…}}`. */
export function resolveTimeString(value: string, now: Date): string {
  const whole = WHOLE.exec(value.trim());
  if (whole !== null) {
    return new Date(now.getTime() + offsetMs(whole[1] ?? "")).toISOString().replace(/\.\d{3}Z$/, "Z");
  }
  return value.replace(EMBEDDED, (_m, expr: string) =>
    new Date(now.getTime() + offsetMs(expr)).toISOString(),
  );
}

function resolveTimes(v: unknown, now: Date): unknown {
  if (typeof v === "string") return resolveTimeString(v, now);
  if (Array.isArray(v)) return v.map((x) => resolveTimes(x, now));
  if (typeof v === "object" && v !== null) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolveTimes(x, now)]));
  }
  return v;
}

function fail(source: string, message: string): never {
  throw new Error(`scenario ${source}: ${message}`);
}

function parseKube(raw: unknown, source: string): KubeScenario {
  if (raw === undefined || raw === null) return { objects: [], logs: [], failingGroups: [] };
  if (typeof raw !== "object" || Array.isArray(raw)) fail(source, "`kube` must be a mapping");
  const k = raw as Record<string, unknown>;
  const objects = (k.objects ?? []) as unknown[];
  if (!Array.isArray(objects)) fail(source, "`kube.objects` must be a list");
  objects.forEach((o, i) => {
    const obj = o as Partial<ScenarioObject> | null;
    if (typeof obj?.apiVersion !== "string" || typeof obj.kind !== "string") {
      fail(source, `kube.objects[${i}] needs apiVersion and kind`);
    }
    if (typeof obj.metadata?.name !== "string")
      fail(source, `kube.objects[${i}] (${obj.kind}) needs metadata.name`);
  });
  const logs = (k.logs ?? []) as unknown[];
  if (!Array.isArray(logs)) fail(source, "`kube.logs` must be a list");
  logs.forEach((l, i) => {
    const log = l as Partial<ScenarioLog> | null;
    if (typeof log?.pod !== "string" || !log.pod.includes("/"))
      fail(source, `kube.logs[${i}].pod must be namespace/name`);
    if (typeof log.container !== "string") fail(source, `kube.logs[${i}].container is required`);
    if (!Array.isArray(log.lines)) fail(source, `kube.logs[${i}].lines must be a list`);
  });
  const failing = (k.failingGroups ?? []) as unknown[];
  if (!Array.isArray(failing) || !failing.every((g) => typeof g === "string" && g.includes("/"))) {
    fail(source, "`kube.failingGroups` must be a list of group/version strings");
  }
  return {
    objects: objects as ScenarioObject[],
    logs: (logs as ScenarioLog[]).map((l) => ({
      ...l,
      lines: l.lines.map((x) => (typeof x === "string" ? x : JSON.stringify(x))),
    })),
    failingGroups: failing as string[],
  };
}

/**
 * Load a scenario from a file path or from YAML text, resolving relative times against `now`.
 * Throws an Error naming the problem (and the source) when the scenario is malformed.
 */
export function loadScenario(pathOrText: string, options: { now?: Date } = {}): Scenario {
  const isText = pathOrText.includes("\n") || !existsSync(pathOrText);
  const source = isText ? "<text>" : pathOrText;
  if (isText && !pathOrText.includes("\n") && !pathOrText.includes(":"))
    fail(source, `no such file: ${pathOrText}`);
  const text = isText ? pathOrText : readFileSync(pathOrText, "utf8");
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    fail(source, `invalid YAML: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc))
    fail(source, "the top level must be a mapping");
  const resolved = resolveTimes(doc, options.now ?? new Date()) as Record<string, unknown>;
  if (typeof resolved.name !== "string" || resolved.name === "") fail(source, "`name` is required");
  const cluster = resolved.cluster as ClusterInfo | undefined;
  if (cluster !== undefined && typeof cluster.name !== "string") fail(source, "`cluster.name` is required");
  return { ...resolved, name: resolved.name, kube: parseKube(resolved.kube, source) };
}
