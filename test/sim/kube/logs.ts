/**
 * Container logs for `GET …/pods/{name}/log`, kept per namespace/pod/container with the time each
 * line was written, so `tailLines`, `sinceSeconds` and `timestamps` behave as the kubelet's do.
 */

export interface LogEntry {
  readonly at: Date;
  readonly line: string;
}

export interface LogQuery {
  tailLines?: number;
  sinceSeconds?: number;
  sinceTime?: Date;
  timestamps?: boolean;
  limitBytes?: number;
}

const ISO_IN_LINE = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/;

/** The kubelet's `--timestamps` prefix: RFC 3339 with nanoseconds. */
function nanoStamp(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, ".$1000000Z");
}

export class LogStore {
  private readonly logs = new Map<string, LogEntry[]>();

  public constructor(private readonly now: () => Date) {}

  private key(namespace: string, pod: string, container: string): string {
    return `${namespace}/${pod}/${container}`;
  }

  /**
   * Append lines. A line carrying an ISO timestamp (a controller-runtime `"ts"` or a klog-style
   * prefix) is dated by it; others by the clock, so scenario logs keep their history.
   */
  public append(
    namespace: string,
    pod: string,
    container: string,
    lines: readonly string[],
    at?: Date,
  ): void {
    const k = this.key(namespace, pod, container);
    const list = this.logs.get(k) ?? [];
    for (const line of lines) {
      const m = ISO_IN_LINE.exec(line);
      const when = at ?? (m !== null ? new Date(m[0]) : this.now());
      list.push({ at: Number.isNaN(when.getTime()) ? this.now() : when, line });
    }
    this.logs.set(k, list);
  }

  public read(namespace: string, pod: string, container: string, q: LogQuery = {}): string {
    let entries = this.logs.get(this.key(namespace, pod, container)) ?? [];
    const since =
      q.sinceTime ??
      (q.sinceSeconds !== undefined ? new Date(this.now().getTime() - q.sinceSeconds * 1000) : undefined);
    if (since !== undefined) entries = entries.filter((e) => e.at.getTime() >= since.getTime());
    if (q.tailLines !== undefined) entries = q.tailLines <= 0 ? [] : entries.slice(-q.tailLines);
    let text = entries
      .map((e) => (q.timestamps === true ? `${nanoStamp(e.at)} ${e.line}\n` : `${e.line}\n`))
      .join("");
    if (q.limitBytes !== undefined) text = Buffer.from(text).subarray(0, q.limitBytes).toString();
    return text;
  }
}
