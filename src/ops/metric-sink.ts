/**
 * Where the request paths report what `/metrics` counts, without loading prom-client: the metrics
 * module (`./metrics.ts`, loaded by the bot with its ops server and Slack client) connects itself
 * here when it loads; a process that never loads it — the terminal CLI, whose start-up must stay
 * under a second (docs/design.md, Performance targets) — counts nothing and pays nothing.
 */
export interface MetricSink {
  /** A command's latency from its text to its result, by verb and outcome. */
  readonly command: (verb: string, outcome: "ok" | "error", seconds: number) => void;
  /** One AWS SDK command (its retries included): `errorName` absent when it succeeded. */
  readonly cloudCall: (service: string, commandName: string | undefined, errorName?: string) => void;
  /**
   * One Kubernetes API request (each retry its own), by verb and code — the HTTP status, `OK` for
   * a success, or the failure's code (`UNREACHABLE`) when no answer came — and how long it took.
   */
  readonly kubeCall: (verb: string, code: string, seconds: number) => void;
  /**
   * A pass of the deletion guard's reconcile loop that could list the namespaces: how many carry
   * the guard, and how many of those are past their window (or invalid) and could not be closed.
   */
  readonly guardPass: (open: number, overdue: number) => void;
  /** An approved action that ran to an end, by its kind (action type) and how it ended. */
  readonly action: (kind: string, outcome: "done" | "stale" | "failed" | "tampered") => void;
}

let sink: MetricSink | undefined;

/** Called once by the metrics module as it loads. */
export function connectMetricSink(s: MetricSink): void {
  sink = s;
}

/** The connected sink, or undefined where metrics are not loaded. */
export function metricSink(): MetricSink | undefined {
  return sink;
}
