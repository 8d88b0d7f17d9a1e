/**
 * The operations endpoint, on its own port so it is never exposed where Slack's requests arrive:
 *
 * - `GET /healthz`: liveness — the process answers (its event loop is not stuck).
 * - `GET /readyz`: readiness — started, not stopping, and every required dependency check passes
 *   (Redis, the Kubernetes API); 503 with the failing checks otherwise. A check that is not
 *   required (the bot's Slack check) only degrades: its failure is reported (`degraded: true`,
 *   `unstuck_dependency_up{dependency} 0`, `unstuck_degraded 1`) and the process stays ready, so a
 *   Slack outage does not take every pod out of its Service. JSON either way.
 * - `GET /metrics`: Prometheus text format (prom-client): the process's instruments (`./metrics.ts`)
 *   and the runtime's scrape-time families.
 *
 * It listens from the start of the process, so liveness holds during the start-up checks; until
 * the runtime is attached, `/readyz` answers 503 "starting".
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "../log.js";
import { withTimeout } from "../util/deadline.js";
import { collectProcessMetrics, CONTENT_TYPE, exposition, gauge, type Family } from "./metrics.js";

/** One dependency the bot needs to do its work; `run` rejects when it is not usable. */
export interface ReadinessCheck {
  readonly name: string;
  /**
   * false: a failure degrades the process (reported in `/readyz` and the metrics) without making
   * it unready. Default true.
   */
  readonly required?: boolean;
  run(): Promise<void>;
}

/** What the runtime lends the endpoint once it is up. */
export interface OpsTarget {
  readonly checks: readonly ReadinessCheck[];
  /** More metric families (job counts…); collected on each scrape, bounded like the checks. */
  readonly metrics?: () => Promise<readonly Family[]>;
}

export interface CheckResult {
  readonly name: string;
  readonly ok: boolean;
  /** Whether a failure makes the process unready (false: it only degrades it). */
  readonly required: boolean;
  readonly ms: number;
  readonly error?: string;
}

export interface Readiness {
  /** Every required check passed (and the runtime is running). */
  readonly ready: boolean;
  /** A check that is not required failed: ready, but something the process uses is down. */
  readonly degraded: boolean;
  readonly state: "starting" | "running" | "stopping";
  readonly checks: readonly CheckResult[];
}

export interface OpsServerOptions {
  readonly port: number;
  readonly host?: string;
  readonly log: Logger;
  /** Bound on each check and on each metrics source (default 3 s: under the probe's timeout). */
  readonly checkTimeoutMs?: number;
  /** Results younger than this are reused, so probes and scrapes do not multiply requests (default 5 s). */
  readonly cacheMs?: number;
  readonly now?: () => number;
}

export interface OpsServer {
  /** The bound port (the real one when 0 was asked). */
  readonly port: number;
  /** Attach the running runtime: `/readyz` starts checking its dependencies. */
  attach(target: OpsTarget): void;
  /** Stop taking work: `/readyz` answers 503 from now on. */
  drain(): void;
  readiness(): Promise<Readiness>;
  close(): Promise<void>;
}

/** `p`, or an error naming `what` once `ms` pass first. */
function bounded<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return withTimeout(p, ms, () => new Error(`${what}: no answer within ${String(ms)} ms`));
}

function message(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split("\n")[0]?.slice(0, 300) ?? "error";
}

/** Every check of the target at once, each bounded, timed and caught. */
function runChecks(t: OpsTarget, timeoutMs: number, now: () => number): Promise<CheckResult[]> {
  return Promise.all(
    t.checks.map(async (c): Promise<CheckResult> => {
      const started = now();
      const required = c.required ?? true;
      try {
        await bounded(c.run(), timeoutMs, c.name);
        return { name: c.name, ok: true, required, ms: now() - started };
      } catch (err) {
        return { name: c.name, ok: false, required, ms: now() - started, error: message(err) };
      }
    }),
  );
}

/** The three paths of the ops port: `/healthz`, `/readyz` (200 or 503) and `/metrics`; GET and HEAD only. */
async function answer(
  req: IncomingMessage,
  res: ServerResponse,
  readiness: () => Promise<Readiness>,
  metrics: () => Promise<string>,
): Promise<void> {
  const path = (req.url ?? "/").split("?")[0];
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.writeHead(405, { allow: "GET, HEAD" }).end();
    return;
  }
  if (path === "/healthz") {
    res.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end("ok");
    return;
  }
  if (path === "/readyz") {
    const r = await readiness();
    res
      .writeHead(r.ready ? 200 : 503, { "content-type": "application/json; charset=utf-8" })
      .end(JSON.stringify(r));
    return;
  }
  if (path === "/metrics") {
    const body = await metrics();
    res.writeHead(200, { "content-type": CONTENT_TYPE }).end(body);
    return;
  }
  res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("not found");
}

/** What the endpoint knows between requests: the attached runtime, draining, the last check results. */
interface OpsState {
  readonly timeoutMs: number;
  readonly cacheMs: number;
  readonly now: () => number;
  readonly log: Logger;
  target: OpsTarget | undefined;
  draining: boolean;
  cached: { at: number; results: Promise<CheckResult[]> } | undefined;
}

/** The target's check results, run again only once the last ones are `cacheMs` old. */
function checkResults(state: OpsState, t: OpsTarget): Promise<CheckResult[]> {
  if (state.cached === undefined || state.now() - state.cached.at >= state.cacheMs)
    state.cached = { at: state.now(), results: runChecks(t, state.timeoutMs, state.now) };
  return state.cached.results;
}

/** The process's readiness: stopping, starting, or running with its checks' verdict. */
async function readinessOf(state: OpsState): Promise<Readiness> {
  if (state.draining) return { ready: false, degraded: false, state: "stopping", checks: [] };
  if (state.target === undefined) return { ready: false, degraded: false, state: "starting", checks: [] };
  const checks = await checkResults(state, state.target);
  return {
    ready: checks.every((c) => c.ok || !c.required),
    degraded: checks.some((c) => !c.ok && !c.required),
    state: "running",
    checks,
  };
}

/** The readiness verdict and each dependency check as metric families. */
function readinessFamilies(r: Readiness): Family[] {
  return [
    gauge("unstuck_ready", "1 when /readyz answers 200.", [{ value: r.ready ? 1 : 0 }]),
    gauge("unstuck_degraded", "1 when a dependency that is not required for readiness (Slack) is down.", [
      { value: r.degraded ? 1 : 0 },
    ]),
    gauge("unstuck_dependency_up", "1 when the dependency's readiness check passed.", [
      ...r.checks.map((c) => ({ labels: { dependency: c.name }, value: c.ok ? 1 : 0 })),
    ]),
    gauge("unstuck_dependency_check_seconds", "Duration of the dependency's last readiness check.", [
      ...r.checks.map((c) => ({ labels: { dependency: c.name }, value: c.ms / 1000 })),
    ]),
  ];
}

/** One scrape: readiness, the runtime's own families (bounded; a failure is counted), as text. */
async function scrape(state: OpsState): Promise<string> {
  const families = readinessFamilies(await readinessOf(state));
  let scrapeErrors = 0;
  if (state.target?.metrics !== undefined && !state.draining) {
    try {
      families.push(...(await bounded(state.target.metrics(), state.timeoutMs, "metrics")));
    } catch (err) {
      scrapeErrors = 1;
      state.log.warn({ err: { message: message(err) } }, "metrics source failed");
    }
  }
  families.push(
    gauge("unstuck_metrics_source_errors", "1 when a metrics source failed in this scrape.", [
      { value: scrapeErrors },
    ]),
  );
  return exposition(families);
}

/** Binds the server, rejecting if it cannot (port taken…); later errors are only logged. */
async function listen(server: Server, port: number, host: string | undefined, log: Logger): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  server.on("error", (err) => log.error({ err: { message: err.message } }, "operations endpoint error"));
}

/** Starts the operations endpoint on its own port; it answers `/readyz` "starting" until attached. */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  collectProcessMetrics();
  const state: OpsState = {
    timeoutMs: options.checkTimeoutMs ?? 3_000,
    cacheMs: options.cacheMs ?? 5_000,
    now: options.now ?? (() => Date.now()),
    log: options.log,
    target: undefined,
    draining: false,
    cached: undefined,
  };
  const readiness = (): Promise<Readiness> => readinessOf(state);
  const server: Server = createServer((req, res) => {
    answer(req, res, readiness, () => scrape(state)).catch((err: unknown) => {
      options.log.error({ err: { message: message(err) } }, "operations endpoint failed");
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  // Probes and scrapers keep connections alive; closing must not wait for them.
  server.keepAliveTimeout = 5_000;
  await listen(server, options.port, options.host, options.log);
  const port = (server.address() as AddressInfo).port;

  return {
    port,
    attach(t) {
      state.target = t;
      state.cached = undefined;
    },
    drain() {
      state.draining = true;
    },
    readiness,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
