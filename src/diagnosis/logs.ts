/**
 * Turns controller log lines into evidence about one object: the lines that name it, and
 * controller-wide errors, de-duplicated with a count (a reconciler repeats the same error every
 * few seconds). Understands controller-runtime's JSON (zap) lines and klog text lines.
 */
import type { Evidence } from "./types.js";

export interface LogTarget {
  readonly namespace: string;
  readonly name: string;
  readonly kind: string;
  /**
   * Other names the controller logs the object under: an IngressGroup member's errors are keyed
   * by the group (`"name":"<group>"`, empty namespace), not by the Ingress.
   */
  readonly aliases?: readonly string[];
}

interface ParsedLine {
  readonly level: "error" | "warn" | "info";
  readonly time?: string;
  readonly text: string;
  /** Object names the line is about (JSON fields), if it says. */
  readonly names: readonly string[];
  readonly raw: string;
}

function textOf(v: unknown, fallback: string): string {
  return typeof v === "string" ? v : typeof v === "number" ? String(v) : fallback;
}

function parseLine(raw: string): ParsedLine {
  const trimmed = raw.trim();
  if (trimmed.startsWith("{")) {
    try {
      const j = JSON.parse(trimmed) as Record<string, unknown>;
      const level = textOf(j.level ?? j.severity, "info").toLowerCase();
      const msg = textOf(j.msg ?? j.message, "");
      const error = j.error !== undefined ? textOf(j.error, JSON.stringify(j.error)) : undefined;
      const obj = (j.object ?? {}) as Record<string, unknown>;
      const names = [j.name, obj.name, j.ingress, j.service]
        .filter((v): v is string => typeof v === "string")
        .map((v) => (v.includes("/") ? (v.split("/").pop() ?? v) : v));
      const ts = j.ts ?? j.time;
      const time =
        typeof ts === "number" ? new Date(ts * 1000).toISOString() : typeof ts === "string" ? ts : undefined;
      return {
        level:
          level.startsWith("err") || level === "fatal" ? "error" : level.startsWith("warn") ? "warn" : "info",
        ...(time ? { time } : {}),
        text: error ? `${msg}: ${error}` : msg,
        names,
        raw: trimmed,
      };
    } catch {
      // not JSON after all: fall through to text handling
    }
  }
  const klogLevel = /^([EWIF])\d{4} /.exec(trimmed)?.[1];
  const level =
    klogLevel === "E" || klogLevel === "F" || /\berror\b|\bfailed\b/i.test(trimmed)
      ? "error"
      : klogLevel === "W"
        ? "warn"
        : "info";
  return { level, text: trimmed, names: [], raw: trimmed };
}

function mentions(line: ParsedLine, target: LogTarget): boolean {
  if (line.names.includes(target.name)) return true;
  if (target.aliases?.some((a) => line.names.includes(a))) return true;
  return line.raw.includes(`${target.namespace}/${target.name}`) || line.raw.includes(`"${target.name}"`);
}

/** Evidence for `target` from `lines` (oldest first), newest-relevant first, at most `max` items. */
export function evidenceFromLogs(
  lines: readonly { from: string; line: string }[],
  target: LogTarget,
  max: number,
): Evidence[] {
  const groups = new Map<
    string,
    { from: string; line: ParsedLine; count: number; lastTime?: string; order: number }
  >();
  let order = 0;
  for (const { from, line } of lines) {
    const parsed = parseLine(line);
    const aboutTarget = mentions(parsed, target);
    const controllerWideError =
      parsed.level === "error" && parsed.names.length === 0 && !parsed.raw.includes("/");
    if (!aboutTarget && !controllerWideError) continue;
    const key = `${from.split("/").slice(0, 2).join("/")}|${parsed.level}|${parsed.text}`;
    const g = groups.get(key);
    if (g) {
      g.count++;
      if (parsed.time) g.lastTime = parsed.time;
      g.order = order++;
    } else {
      groups.set(key, {
        from,
        line: parsed,
        count: 1,
        ...(parsed.time ? { lastTime: parsed.time } : {}),
        order: order++,
      });
    }
  }
  return [...groups.values()]
    .sort((a, b) => Number(b.line.level === "error") - Number(a.line.level === "error") || b.order - a.order)
    .slice(0, max)
    .map((g) => ({
      source: "log" as const,
      from: g.from,
      text: g.count > 1 ? `${g.line.text} (×${g.count})` : g.line.text,
      ...(g.lastTime ? { time: g.lastTime } : {}),
      error: g.line.level === "error",
    }));
}
