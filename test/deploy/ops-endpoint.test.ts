/**
 * The operations endpoint (src/ops): liveness from the start, readiness that follows the runtime's
 * life (starting → running → stopping) and its dependency checks, and Prometheus text metrics.
 */
import { afterEach, describe, expect, it } from "vitest";
import { pino } from "pino";
import { loadOpsConfig } from "../../src/ops/config.js";
import { renderMetrics } from "../../src/ops/metrics.js";
import { startOpsServer, type OpsServer } from "../../src/ops/server.js";

const log = pino({ level: "silent" });

describe("operations endpoint", () => {
  let server: OpsServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const get = async (path: string) => {
    const res = await fetch(`http://127.0.0.1:${String(server?.port)}${path}`);
    return { status: res.status, type: res.headers.get("content-type"), body: await res.text() };
  };

  it("answers liveness at once and readiness 503 'starting' until the runtime is attached", async () => {
    server = await startOpsServer({ port: 0, host: "127.0.0.1", log });
    expect(await get("/healthz")).toMatchObject({ status: 200, body: "ok" });
    const r = await get("/readyz");
    expect(r.status).toBe(503);
    expect(JSON.parse(r.body)).toEqual({ ready: false, degraded: false, state: "starting", checks: [] });
    expect((await get("/nothing")).status).toBe(404);
  });

  it("is ready only when every check passes, names the failing one, and stops being ready when draining", async () => {
    let kubeUp = true;
    server = await startOpsServer({ port: 0, host: "127.0.0.1", log, cacheMs: 0, checkTimeoutMs: 200 });
    server.attach({
      checks: [
        { name: "redis", run: () => Promise.resolve() },
        {
          name: "kubernetes",
          run: () => (kubeUp ? Promise.resolve() : Promise.reject(new Error("connect ECONNREFUSED"))),
        },
        { name: "slack", run: () => Promise.resolve() },
      ],
    });
    const ok = await get("/readyz");
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toMatchObject({
      ready: true,
      state: "running",
      checks: [
        { name: "redis", ok: true },
        { name: "kubernetes", ok: true },
        { name: "slack", ok: true },
      ],
    });
    kubeUp = false;
    const down = await get("/readyz");
    expect(down.status).toBe(503);
    expect(JSON.parse(down.body).checks[1]).toMatchObject({
      name: "kubernetes",
      ok: false,
      error: "connect ECONNREFUSED",
    });
    kubeUp = true;
    server.drain();
    const stopping = await get("/readyz");
    expect(stopping.status).toBe(503);
    expect(JSON.parse(stopping.body)).toMatchObject({ ready: false, state: "stopping" });
    expect((await get("/healthz")).status).toBe(200);
  });

  it("a failing check that is not required degrades (body and metrics) but keeps the process ready; a required one does not", async () => {
    let slackUp = false;
    let redisUp = true;
    server = await startOpsServer({ port: 0, host: "127.0.0.1", log, cacheMs: 0, checkTimeoutMs: 200 });
    server.attach({
      checks: [
        {
          name: "redis",
          run: () => (redisUp ? Promise.resolve() : Promise.reject(new Error("ECONNREFUSED"))),
        },
        {
          name: "slack",
          required: false,
          run: () => (slackUp ? Promise.resolve() : Promise.reject(new Error("auth.test: 503"))),
        },
      ],
    });
    const degraded = await get("/readyz");
    expect(degraded.status).toBe(200);
    expect(JSON.parse(degraded.body)).toMatchObject({
      ready: true,
      degraded: true,
      checks: [
        { name: "redis", ok: true, required: true },
        { name: "slack", ok: false, required: false, error: "auth.test: 503" },
      ],
    });
    const lines = (await get("/metrics")).body.split("\n");
    expect(lines).toContain("unstuck_ready 1");
    expect(lines).toContain("unstuck_degraded 1");
    expect(lines).toContain('unstuck_dependency_up{dependency="slack"} 0');
    redisUp = false;
    const down = await get("/readyz");
    expect(down.status).toBe(503);
    expect(JSON.parse(down.body)).toMatchObject({ ready: false, degraded: true });
    redisUp = true;
    slackUp = true;
    expect(JSON.parse((await get("/readyz")).body)).toMatchObject({ ready: true, degraded: false });
  });

  it("bounds a check that hangs, and reuses results within the cache period", async () => {
    let calls = 0;
    server = await startOpsServer({ port: 0, host: "127.0.0.1", log, cacheMs: 60_000, checkTimeoutMs: 100 });
    server.attach({
      checks: [
        {
          name: "redis",
          run: () => {
            calls++;
            return new Promise<void>(() => undefined);
          },
        },
      ],
    });
    const started = Date.now();
    const r = await get("/readyz");
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(r.status).toBe(503);
    expect(JSON.parse(r.body).checks[0].error).toContain("no answer within 100 ms");
    await get("/readyz");
    await get("/metrics");
    expect(calls).toBe(1);
  });

  it("serves Prometheus text: process figures, readiness, dependencies and the runtime's own families", async () => {
    server = await startOpsServer({ port: 0, host: "127.0.0.1", log, cacheMs: 0 });
    server.attach({
      checks: [{ name: "redis", run: () => Promise.resolve() }],
      metrics: () =>
        Promise.resolve([
          {
            name: "unstuck_jobs",
            help: "BullMQ jobs by queue and state.",
            type: "gauge" as const,
            samples: [{ labels: { queue: "actions", state: "waiting" }, value: 3 }],
          },
        ]),
    });
    const m = await get("/metrics");
    expect(m.status).toBe(200);
    expect(m.type).toBe("text/plain; version=0.0.4; charset=utf-8");
    const lines = m.body.split("\n");
    expect(lines).toContain("# TYPE process_resident_memory_bytes gauge");
    expect(lines).toContain("# TYPE process_cpu_seconds_total counter");
    expect(lines).toContain("unstuck_ready 1");
    expect(lines).toContain('unstuck_dependency_up{dependency="redis"} 1');
    expect(lines).toContain('unstuck_jobs{queue="actions",state="waiting"} 3');
    expect(lines).toContain("unstuck_metrics_source_errors 0");
    // Every sample line is `name{labels} value` with a numeric value.
    for (const line of lines.filter((l) => l !== "" && !l.startsWith("#"))) {
      expect(line).toMatch(/^[a-z_:][a-z0-9_:]*(\{[^}]*\})? (-?[0-9.e+-]+|NaN|[+-]Inf)$/);
    }
  });

  it("escapes label values and help text as the text format requires", async () => {
    const text = await renderMetrics([
      {
        name: "x",
        help: "a\\b\nc",
        type: "gauge",
        samples: [{ labels: { l: 'q"\\\n' }, value: Infinity }],
      },
    ]);
    expect(text).toBe('# HELP x a\\\\b\\nc\n# TYPE x gauge\nx{l="q\\"\\\\\\n"} +Inf\n');
  });

  it("refuses to start on a port in use, and reads UNSTUCK_OPS_PORT strictly", async () => {
    server = await startOpsServer({ port: 0, host: "127.0.0.1", log });
    await expect(startOpsServer({ port: server.port, host: "127.0.0.1", log })).rejects.toThrow(/EADDRINUSE/);
    expect(loadOpsConfig({})).toEqual({});
    expect(loadOpsConfig({ UNSTUCK_OPS_PORT: "9090" })).toEqual({ port: 9090 });
    expect(loadOpsConfig({ UNSTUCK_OPS_PORT: "0", UNSTUCK_OPS_HOST: "127.0.0.1" })).toEqual({
      port: 0,
      host: "127.0.0.1",
    });
    expect(() => loadOpsConfig({ UNSTUCK_OPS_PORT: "http" })).toThrow(/UNSTUCK_OPS_PORT/);
    expect(() => loadOpsConfig({ UNSTUCK_OPS_PORT: "70000" })).toThrow(/UNSTUCK_OPS_PORT/);
  });
});
