/**
 * Metrics with prom-client. One process-wide registry holds the instruments the request paths
 * update (command latency, cloud API calls and errors, Slack API retries and rate limits) and,
 * once an ops server starts, Node's default process and runtime metrics. Figures read at scrape
 * time (readiness, job counts and ages, approvals by state) arrive as `Family` values and are
 * rendered through a registry of their own, so one exposition carries both.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import pkg from "../../package.json" with { type: "json" };
import { connectMetricSink } from "./metric-sink.js";

export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  readonly labels?: Labels;
  readonly value: number;
}

/** A family read at scrape time (gauges of Redis/BullMQ state, readiness). */
export interface Family {
  readonly name: string;
  readonly help: string;
  readonly type: "gauge" | "counter";
  readonly samples: readonly Sample[];
}

/** The process's instruments: updated where the work happens, read by every scrape. */
export const processRegistry = new Registry();

/** Latency of a command from parse to result, by verb (`ns`, `trace ns`…) and outcome. */
export const commandDuration = new Histogram({
  name: "unstuck_command_duration_seconds",
  help: "Time from a command's text to its result, by verb and outcome (ok | error).",
  labelNames: ["verb", "outcome"] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60],
  registers: [processRegistry],
});

/** Every AWS SDK call (retries included), by service, operation and result code (`OK` or the error name). */
export const cloudApiCalls = new Counter({
  name: "unstuck_cloud_api_calls_total",
  help: "AWS API calls (one per SDK command, its retries included) by service, operation and code (OK or the error name).",
  labelNames: ["service", "operation", "code"] as const,
  registers: [processRegistry],
});

export const cloudApiErrors = new Counter({
  name: "unstuck_cloud_api_errors_total",
  help: "AWS API calls that failed, by service, operation and error code.",
  labelNames: ["service", "operation", "code"] as const,
  registers: [processRegistry],
});

/** Slack Web API attempts retried by a WebClient, by reason (rate_limited | http | network). */
export const slackApiRetries = new Counter({
  name: "unstuck_slack_api_retries_total",
  help: "Slack Web API requests the client retried, by reason (rate_limited, http, network).",
  labelNames: ["reason"] as const,
  registers: [processRegistry],
});

/** HTTP 429 answers from Slack, by Web API method. */
export const slackApiRateLimited = new Counter({
  name: "unstuck_slack_api_rate_limited_total",
  help: "Slack Web API answers of HTTP 429 (rate limited), by method.",
  labelNames: ["method"] as const,
  registers: [processRegistry],
});

/** Kubernetes API requests (each retry its own), by verb and code (HTTP status, OK, or why no answer came). */
export const kubeApiRequests = new Counter({
  name: "unstuck_kube_api_requests_total",
  help: "Kubernetes API requests (each retry its own) by verb and code (the HTTP status, OK, or UNREACHABLE when no answer came).",
  labelNames: ["verb", "code"] as const,
  registers: [processRegistry],
});

/** How long a Kubernetes API request took, by verb (the wait for a free request slot not included). */
export const kubeApiDuration = new Histogram({
  name: "unstuck_kube_api_request_duration_seconds",
  help: "Time a Kubernetes API request took, by verb (the wait for a free request slot not included).",
  labelNames: ["verb"] as const,
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [processRegistry],
});

/** Namespaces carrying the deletion guard annotation at the reconcile loop's last pass. */
export const guardsOpen = new Gauge({
  name: "unstuck_deletion_guards_open",
  help: "Namespaces carrying the deletion guard annotation (unstuck.dev/deletion-approved) at the reconcile loop's last pass.",
  registers: [processRegistry],
});

/** Guards past their window (or not the bot's) that the last pass could not close: deletion stays allowed. */
export const guardsOverdue = new Gauge({
  name: "unstuck_deletion_guards_overdue",
  help: "Deletion guards past their window, or not written by the bot, that the reconcile loop's last pass could not close.",
  registers: [processRegistry],
});

/** When the reconcile loop last listed the namespaces: a stale value means nothing bounds an open guard. */
export const guardPassAt = new Gauge({
  name: "unstuck_deletion_guard_reconcile_last_pass_timestamp_seconds",
  help: "Unix time of the deletion guard reconcile loop's last pass that could list the namespaces.",
  registers: [processRegistry],
});

/**
 * Which build is running: always 1, its labels the version (package.json), the source revision
 * the image was built from (`UNSTUCK_REVISION`, the Dockerfile's `REVISION` build argument) and
 * Node's version — for dashboards that compare replicas during a rollout.
 */
export const buildInfo = new Gauge({
  name: "unstuck_build_info",
  help: "The running build: version, source revision and Node.js version as labels; always 1.",
  labelNames: ["version", "revision", "node_version"] as const,
  registers: [processRegistry],
});
buildInfo.set(
  {
    version: pkg.version,
    revision: labelValue(process.env.UNSTUCK_REVISION, "unknown"),
    node_version: process.version,
  },
  1,
);

/** Approved actions that ran to an end, by kind and outcome: what the bot changed, and how it went. */
export const actionsExecuted = new Counter({
  name: "unstuck_actions_executed_total",
  help: "Approved actions that ran to an end, by kind (action type) and outcome (done, stale, failed, tampered).",
  labelNames: ["kind", "outcome"] as const,
  registers: [processRegistry],
});

let defaultsCollected = false;

/** Node's process and runtime metrics (`process_*`, `nodejs_*`), registered once per process. */
export function collectProcessMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  collectDefaultMetrics({ register: processRegistry, eventLoopMonitoringPrecision: 20 });
}

/** A bounded label value: error names come from remote services. */
export function labelValue(v: string | undefined, fallback: string): string {
  const s = (v ?? "").replace(/[^A-Za-z0-9_.:-]/g, "_").slice(0, 64);
  return s === "" ? fallback : s;
}

// The request paths report through the sink (no prom-client import of their own); loading this
// module connects it to the instruments above.
connectMetricSink({
  command: (verb, outcome, seconds) => {
    commandDuration.observe({ verb, outcome }, seconds);
  },
  cloudCall: (service, commandName, errorName) => {
    const operation = labelValue(commandName?.replace(/Command$/, ""), "unknown");
    if (errorName === undefined) {
      cloudApiCalls.inc({ service, operation, code: "OK" });
      return;
    }
    const code = labelValue(errorName, "Error");
    cloudApiCalls.inc({ service, operation, code });
    cloudApiErrors.inc({ service, operation, code });
  },
  kubeCall: (verb, code, seconds) => {
    const v = labelValue(verb, "unknown");
    kubeApiRequests.inc({ verb: v, code: labelValue(code, "unknown") });
    kubeApiDuration.observe({ verb: v }, seconds);
  },
  guardPass: (open, overdue) => {
    guardsOpen.set(open);
    guardsOverdue.set(overdue);
    guardPassAt.set(Date.now() / 1000);
  },
  action: (kind, outcome) => {
    actionsExecuted.inc({ kind: labelValue(kind, "unknown"), outcome });
  },
});

/** Scrape-time families as a prom-client registry (a fresh one per scrape: the values are a snapshot). */
export function familiesRegistry(families: readonly Family[]): Registry {
  const registry = new Registry();
  for (const f of families) {
    const labelNames = [...new Set(f.samples.flatMap((s) => Object.keys(s.labels ?? {})))];
    if (f.type === "counter") {
      const c = new Counter({ name: f.name, help: f.help, labelNames, registers: [registry] });
      for (const s of f.samples) c.inc(s.labels ?? {}, s.value);
    } else {
      const g = new Gauge({ name: f.name, help: f.help, labelNames, registers: [registry] });
      for (const s of f.samples) g.set(s.labels ?? {}, s.value);
    }
  }
  return registry;
}

/**
 * prom-client 15 writes a NaN sample as `Nan` (an event-loop figure before its first sample), which
 * Prometheus's parser rejects; the text format spells it `NaN`.
 */
const fixNaN = (text: string): string => text.replace(/ Nan$/gm, " NaN");

/** Families as Prometheus text (format 0.0.4), through prom-client's own rendering. */
export async function renderMetrics(families: readonly Family[]): Promise<string> {
  return fixNaN(await familiesRegistry(families).metrics());
}

/** The process's instruments and the scrape's families, as one exposition. */
export async function exposition(families: readonly Family[]): Promise<string> {
  return fixNaN(await Registry.merge([processRegistry, familiesRegistry(families)]).metrics());
}

export const CONTENT_TYPE = processRegistry.contentType;

export function gauge(name: string, help: string, samples: readonly Sample[]): Family {
  return { name, help, type: "gauge", samples };
}

export function counter(name: string, help: string, samples: readonly Sample[]): Family {
  return { name, help, type: "counter", samples };
}
