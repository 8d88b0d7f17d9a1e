/**
 * The chart's monitoring objects, rendered with the real `helm` and judged by the real `promtool`
 * (Prometheus's own rule checker and unit-test runner): the PrometheusRule's syntax and templates,
 * each alert fired by the series that mean trouble and silent on healthy ones, every metric it reads
 * one the code exports, every runbook link a section of docs/runbooks.md; the ServiceMonitor's and
 * PodMonitor's knobs.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments, stringify } from "yaml";

const CHART = "deploy/chart/unstuck";
const NS = "unstuck";
const BASE = [
  "-f",
  `${CHART}/ci/default-values.yaml`,
  "--set",
  "redis.bundled.auth.password=test-only-password-0123",
];

interface Obj {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec: ReturnType<typeof JSON.parse>;
}

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

function run(cmd: string, args: readonly string[], cwd?: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({
        code: err === null ? 0 : typeof err.code === "number" ? err.code : 127,
        out: stdout + stderr,
      });
    });
  });
}

async function render(args: readonly string[]): Promise<{ code: number; out: string; objects: Obj[] }> {
  const r = await run("helm", ["template", "r", CHART, "--namespace", NS, ...BASE, ...args]);
  const objects =
    r.code === 0
      ? parseAllDocuments(r.out)
          .map((d) => d.toJS() as Obj | null)
          .filter((o): o is Obj => o !== null)
      : [];
  return { ...r, objects };
}

/** Every metric name the code registers or reports at scrape time. */
async function exportedMetrics(): Promise<Set<string>> {
  const names = new Set<string>();
  for (const entry of await readdir("src", { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    const text = await readFile(join(entry.parentPath, entry.name), "utf8");
    for (const m of text.matchAll(/"(unstuck_[a-z_]+)"/g)) if (m[1] !== undefined) names.add(m[1]);
  }
  return names;
}

const sel = `namespace="${NS}"`;

/**
 * Per alert: series that must fire it (and the labels it then carries) and healthy series that must
 * not, in promtool's notation (`a+bxN`: start at a, add b, N more samples, one a minute).
 */
const CASES: Record<
  string,
  {
    fire: Record<string, string>;
    healthy: Record<string, string>;
    at: string;
    labels: Record<string, string>;
  }
> = {
  UnstuckNotReady: {
    fire: { [`unstuck_ready{${sel},pod="bot-1"}`]: "0x30" },
    healthy: { [`unstuck_ready{${sel},pod="bot-1"}`]: "1x30" },
    at: "15m",
    labels: { pod: "bot-1" },
  },
  UnstuckNoLiveWorker: {
    fire: { [`unstuck_cluster_workers{${sel},cluster="prod-eu"}`]: "0x30" },
    healthy: { [`unstuck_cluster_workers{${sel},cluster="prod-eu"}`]: "2x30" },
    at: "10m",
    labels: { cluster: "prod-eu" },
  },
  UnstuckQueueBacklog: {
    fire: { [`unstuck_job_oldest_age_seconds{${sel},queue="actions",state="waiting"}`]: "400+60x30" },
    healthy: {
      [`unstuck_job_oldest_age_seconds{${sel},queue="actions",state="waiting"}`]: "5x30",
      // A long-running job is not a backlog.
      [`unstuck_job_oldest_age_seconds{${sel},queue="actions",state="active"}`]: "900x30",
    },
    at: "15m",
    labels: { queue: "actions" },
  },
  UnstuckDeletionGuardOverdue: {
    fire: { [`unstuck_deletion_guards_overdue{${sel},pod="w-1"}`]: "1x30" },
    healthy: {
      [`unstuck_deletion_guards_overdue{${sel},pod="w-1"}`]: "0x30",
      [`unstuck_deletion_guards_open{${sel},pod="w-1"}`]: "3x30",
    },
    at: "10m",
    labels: {},
  },
  UnstuckGuardReconcileStalled: {
    // The last pass at t=0, never again (the value is a Unix time).
    fire: { [`unstuck_deletion_guard_reconcile_last_pass_timestamp_seconds{${sel},pod="w-1"}`]: "0x30" },
    healthy: {
      [`unstuck_deletion_guard_reconcile_last_pass_timestamp_seconds{${sel},pod="w-1"}`]: "0+60x30",
    },
    at: "15m",
    labels: {},
  },
  UnstuckTamperedApproval: {
    fire: {
      [`unstuck_actions_executed_total{${sel},kind="remove-finalizer",outcome="tampered"}`]:
        "0 0 0 1 1 1 1 1 1 1",
    },
    healthy: {
      [`unstuck_actions_executed_total{${sel},kind="remove-finalizer",outcome="tampered"}`]: "0x10",
      [`unstuck_actions_executed_total{${sel},kind="remove-finalizer",outcome="done"}`]: "0+1x10",
    },
    at: "6m",
    labels: {},
  },
  UnstuckSlackDegraded: {
    fire: { [`unstuck_degraded{${sel},pod="bot-1"}`]: "1x30" },
    healthy: { [`unstuck_degraded{${sel},pod="bot-1"}`]: "0x30" },
    at: "15m",
    labels: {},
  },
  UnstuckApprovalsNotExpiring: {
    fire: { [`unstuck_approvals_pending_overdue{${sel},pod="bot-1"}`]: "2x30" },
    healthy: { [`unstuck_approvals_pending_overdue{${sel},pod="bot-1"}`]: "0x30" },
    at: "20m",
    labels: {},
  },
  UnstuckKubeApiForbidden: {
    fire: { [`unstuck_kube_api_requests_total{${sel},verb="list",code="403"}`]: "0 0 0 1 2 3 4 5 6 7" },
    healthy: { [`unstuck_kube_api_requests_total{${sel},verb="list",code="OK"}`]: "0+10x10" },
    at: "8m",
    labels: { verb: "list" },
  },
  UnstuckKubeApiFailing: {
    fire: {
      [`unstuck_kube_api_requests_total{${sel},verb="get",code="UNREACHABLE"}`]: "0+10x30",
      [`unstuck_kube_api_requests_total{${sel},verb="get",code="OK"}`]: "0+10x30",
    },
    healthy: {
      [`unstuck_kube_api_requests_total{${sel},verb="get",code="503"}`]: "0+1x30",
      [`unstuck_kube_api_requests_total{${sel},verb="get",code="OK"}`]: "0+10x30",
    },
    at: "20m",
    labels: {},
  },
  UnstuckAwsAccessDenied: {
    fire: {
      [`unstuck_cloud_api_errors_total{${sel},service="ec2",operation="DescribeNetworkInterfaces",code="UnauthorizedOperation"}`]:
        "0 0 1 2 2 2",
    },
    healthy: {
      [`unstuck_cloud_api_errors_total{${sel},service="elbv2",operation="DescribeTags",code="Throttling"}`]:
        "0+1x5",
    },
    at: "5m",
    labels: { service: "ec2", operation: "DescribeNetworkInterfaces" },
  },
};

describe("the chart's alert rules (PrometheusRule), judged by promtool", () => {
  let dir: string;
  let rules: Rule[];
  let rule: Obj | undefined;

  beforeAll(async () => {
    const v = await run("promtool", ["--version"]);
    expect(v.code, "promtool must be on PATH (`bash .ci/run` installs Debian's prometheus)").toBe(0);
    dir = await mkdtemp(join(tmpdir(), "unstuck-alerts-"));
    const r = await render(["--set", "metrics.prometheusRule.enabled=true"]);
    expect(r.code, r.out).toBe(0);
    rule = r.objects.find((o) => o.kind === "PrometheusRule");
    rules = (rule?.spec.groups as { rules: Rule[] }[]).flatMap((g) => g.rules);
    await writeFile(join(dir, "rules.yaml"), stringify(rule?.spec));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("pass promtool's check: expressions and annotation templates parse", async () => {
    const r = await run("promtool", ["check", "rules", "rules.yaml"], dir);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain(`SUCCESS: ${String(rules.length)} rules found`);
  });

  it("read only this release's namespace and only metrics the code exports", async () => {
    const exported = await exportedMetrics();
    for (const r of rules) {
      const metrics = [...r.expr.matchAll(/\b(unstuck_[a-z_]+)\{([^}]*)\}/g)];
      expect(metrics.length, r.alert).toBeGreaterThan(0);
      for (const [, name = "", matchers = ""] of metrics) {
        expect(exported, `${r.alert} reads ${name}`).toContain(name.replace(/_(bucket|count|sum)$/, ""));
        expect(matchers, r.alert).toContain(`namespace="${NS}"`);
      }
    }
  });

  it("each fire on the series that mean trouble, and stay silent on healthy ones", async () => {
    expect(Object.keys(CASES).sort()).toEqual(rules.map((r) => r.alert).sort());
    // The rules' logic (expression, `for`, labels); annotations are checked by the rule check above.
    const bare = {
      groups: [
        {
          name: "unstuck",
          rules: rules.map((r) => ({
            alert: r.alert,
            expr: r.expr,
            labels: r.labels,
            ...(r.for !== undefined ? { for: r.for } : {}),
          })),
        },
      ],
    };
    await writeFile(join(dir, "bare.yaml"), stringify(bare));
    const tests = Object.entries(CASES).flatMap(([alert, c]) => {
      const severity = rules.find((r) => r.alert === alert)?.labels["severity"] ?? "";
      const series = (s: Record<string, string>) =>
        Object.entries(s).map(([k, v]) => ({ series: k, values: v }));
      return [
        {
          interval: "1m",
          input_series: series(c.fire),
          alert_rule_test: [
            { eval_time: c.at, alertname: alert, exp_alerts: [{ exp_labels: { ...c.labels, severity } }] },
          ],
        },
        {
          interval: "1m",
          input_series: series(c.healthy),
          alert_rule_test: [{ eval_time: c.at, alertname: alert, exp_alerts: [] }],
        },
      ];
    });
    await writeFile(
      join(dir, "tests.yaml"),
      stringify({ rule_files: ["bare.yaml"], evaluation_interval: "1m", tests }),
    );
    const r = await run("promtool", ["test", "rules", "tests.yaml"], dir);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain("SUCCESS");
  });

  it("link each alert to its own section of docs/runbooks.md, and route by the labels given", async () => {
    const doc = await readFile("docs/runbooks.md", "utf8");
    const anchors = new Set([...doc.matchAll(/^## (\S+)$/gm)].map((m) => (m[1] ?? "").toLowerCase()));
    for (const r of rules) {
      expect(r.annotations["runbook_url"], r.alert).toMatch(/\/docs\/runbooks\.md#[a-z]+$/);
      expect(anchors, r.alert).toContain(r.annotations["runbook_url"]?.split("#")[1]);
      expect(r.annotations["summary"], r.alert).not.toBe("");
      expect(["warning", "critical"]).toContain(r.labels["severity"]);
    }
    const routed = await render([
      "--set",
      "metrics.prometheusRule.enabled=true",
      "--set",
      "metrics.prometheusRule.namespace=monitoring",
      "--set",
      "metrics.prometheusRule.alertLabels.team=platform",
      "--set",
      "metrics.prometheusRule.runbookBaseUrl=https://wiki.example.com/unstuck",
      "--set",
      "metrics.prometheusRule.labels.release=kube-prometheus-stack",
    ]);
    const obj = routed.objects.find((o) => o.kind === "PrometheusRule");
    expect(obj?.metadata.namespace).toBe("monitoring");
    expect(obj?.metadata.labels?.["release"]).toBe("kube-prometheus-stack");
    const first = (obj?.spec.groups as { rules: Rule[] }[])[0]?.rules[0];
    expect(first?.labels).toMatchObject({ team: "platform" });
    expect(first?.annotations["runbook_url"]).toBe("https://wiki.example.com/unstuck#unstucknotready");
    // The release's namespace is still the one the expressions read.
    expect(first?.expr).toContain(`namespace="${NS}"`);
  });
});

describe("the chart's scrape objects", () => {
  const knobs = (kind: string) => [
    "--set",
    `metrics.${kind}.enabled=true`,
    "--set",
    `metrics.${kind}.namespace=monitoring`,
    "--set",
    `metrics.${kind}.scrapeTimeout=5s`,
    "--set",
    `metrics.${kind}.relabelings[0].targetLabel=cluster`,
    "--set",
    `metrics.${kind}.relabelings[0].replacement=prod-eu`,
    "--set",
    `metrics.${kind}.metricRelabelings[0].action=drop`,
    "--set",
    `metrics.${kind}.metricRelabelings[0].regex=nodejs_.*`,
  ];

  it("put a ServiceMonitor where the operator watches, selecting the release's ops Services there", async () => {
    const r = await render(knobs("serviceMonitor"));
    expect(r.code, r.out).toBe(0);
    const monitor = r.objects.find((o) => o.kind === "ServiceMonitor");
    expect(monitor?.metadata.namespace).toBe("monitoring");
    expect(monitor?.spec.namespaceSelector).toEqual({ matchNames: [NS] });
    expect(monitor?.spec.endpoints).toEqual([
      {
        port: "ops",
        path: "/metrics",
        interval: "30s",
        scrapeTimeout: "5s",
        relabelings: [{ targetLabel: "cluster", replacement: "prod-eu" }],
        metricRelabelings: [{ action: "drop", regex: "nodejs_.*" }],
      },
    ]);
  });

  it("offer the same scrape as a PodMonitor of the bot's and workers' pods, but not both at once", async () => {
    const r = await render(knobs("podMonitor"));
    expect(r.code, r.out).toBe(0);
    expect(r.objects.filter((o) => o.kind === "ServiceMonitor")).toEqual([]);
    const monitor = r.objects.find((o) => o.kind === "PodMonitor");
    expect(monitor?.metadata.namespace).toBe("monitoring");
    expect(monitor?.spec.selector.matchExpressions).toEqual([
      { key: "app.kubernetes.io/component", operator: "In", values: ["bot", "worker"] },
    ]);
    // Every pod it selects has the port it scrapes.
    const pods = r.objects
      .filter((o) => o.kind === "Deployment")
      .map(
        (d) =>
          d.spec.template as {
            metadata: { labels: Record<string, string> };
            spec: { containers: { ports?: { name: string }[] }[] };
          },
      )
      .filter((t) => ["bot", "worker"].includes(t.metadata.labels["app.kubernetes.io/component"] ?? ""));
    expect(pods.length).toBeGreaterThan(0);
    for (const p of pods) expect(p.spec.containers[0]?.ports?.map((x) => x.name)).toContain("ops");

    const both = await render([...knobs("podMonitor"), "--set", "metrics.serviceMonitor.enabled=true"]);
    expect(both.code).not.toBe(0);
    expect(both.out).toContain("metrics.podMonitor and metrics.serviceMonitor scrape the same pods");
    const bad = await render(["--set", "metrics.serviceMonitor.scrapeTimeout=soon"]);
    expect(bad.code).not.toBe(0);
    expect(bad.out).toContain("scrapeTimeout");
  });
});
