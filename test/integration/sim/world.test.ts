/**
 * One world: the seed scenario's kube and AWS sections share one clock, and `npm run sim` starts
 * both and writes an env file the real `aws` CLI can use.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

import { eventually } from "../../helpers/eventually.js";
import { startWorld, type World } from "../../sim/world.js";

const SEED = "test/fixtures/scenarios/seed-incident.yaml";
const RULE = "test/fixtures/scenarios/seed-incident-rule.yaml";
const BACKEND_SG = "sg-0f1e2d3c4b5a69788";

let world: World | undefined;
afterEach(async () => {
  await world?.stop();
  world = undefined;
});

function deleteSgFailures(w: World): Date[] {
  return w.aws.world.trail
    .filter(
      (e) => e.eventName === "DeleteSecurityGroup" && e.detail.errorCode === "Client.DependencyViolation",
    )
    .map((e) => e.eventTime);
}

describe("startWorld", () => {
  it("loads both sections against one clock: CloudTrail failures fall 10-12 minutes after the namespace's deletion", async () => {
    const at = new Date("2030-01-01T00:00:00Z");
    world = await startWorld({ scenario: SEED, now: () => at, lbc: false });
    const ns = world.kube.store.get("v1", "Namespace", undefined, "myapp");
    const deletedAt = Date.parse(String(ns?.metadata?.deletionTimestamp));
    const failures = deleteSgFailures(world);
    expect(failures.length).toBeGreaterThan(10);
    for (const t of failures) {
      const minutes = (t.getTime() - deletedAt) / 60_000;
      expect(minutes).toBeGreaterThan(9);
      expect(minutes).toBeLessThan(12);
    }
    const deletes = world.aws.world.trail.filter((e) => e.eventName === "DeleteLoadBalancer");
    expect(deletes).toHaveLength(7);
    for (const e of deletes) expect(e.eventTime.getTime()).toBeGreaterThan(deletedAt);
    expect(world.lbc).toBeUndefined();
  });

  it("variant A: the stuck Ingress's ALB is gone, its ENI still holds the backend SG; no re-created worker ALB", async () => {
    world = await startWorld({ scenario: SEED, lbc: false });
    const ing = world.kube.store.get("networking.k8s.io/v1", "Ingress", "myapp", "myapp-worker-ingress");
    const hostname = (ing as { status?: { loadBalancer?: { ingress?: { hostname?: string }[] } } }).status
      ?.loadBalancer?.ingress?.[0]?.hostname;
    expect(hostname).toContain("1559597038");
    const lbNames = [...world.aws.world.loadBalancers.values()].map((lb) => lb.name);
    expect(lbNames.some((n) => n.startsWith("k8s-myapp-"))).toBe(false);
    const dependents = world.aws.world.dependentsOf(BACKEND_SG);
    expect(dependents.networkInterfaces).toHaveLength(1);
    expect(dependents.referencingRules).toHaveLength(0);
    expect(world.aws.world.networkInterfaces.get(dependents.networkInterfaces[0] ?? "")?.status).toBe(
      "in-use",
    );
  });

  it("variant B: a node-SG rule references the backend SG and no ENI does", async () => {
    world = await startWorld({ scenario: RULE, lbc: false });
    const dependents = world.aws.world.dependentsOf(BACKEND_SG);
    expect(dependents.networkInterfaces).toHaveLength(0);
    expect(dependents.referencingRules).toHaveLength(1);
    expect(world.scenario?.name).toBe("seed-incident-rule");
  });
});

describe("npm run sim with --aws-env", () => {
  it("prints both endpoints and writes an env file the aws CLI works with", async () => {
    const dir = await mkdtemp(join(tmpdir(), "world-sim-"));
    const kubeconfig = join(dir, "kubeconfig");
    const envFile = join(dir, "aws.env");
    const child = spawn(
      "npx",
      ["tsx", "test/sim/main.ts", "--kubeconfig", kubeconfig, "--scenario", SEED, "--aws-env", envFile],
      { stdio: ["ignore", "pipe", "pipe"], detached: true },
    );
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    try {
      await eventually(
        () => (out.includes("AWS simulator listening on") ? true : undefined),
        30_000,
        "sim start",
      );
      expect(out).toMatch(/kube API simulator listening on http:\/\/127\.0\.0\.1:\d+/);
      const env = Object.fromEntries(
        (await readFile(envFile, "utf8"))
          .trim()
          .split("\n")
          .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
      ) as Record<string, string>;
      expect(env.AWS_ENDPOINT_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(env.AWS_REGION).toBe("ap-northeast-2");
      expect(env.UNSTUCK_CLUSTER_NAME).toBe("prod-eks");
      const stdout = await new Promise<string>((resolve, reject) => {
        execFile(
          "aws",
          [
            "--endpoint-url",
            env.AWS_ENDPOINT_URL ?? "",
            "ec2",
            "describe-network-interfaces",
            "--filters",
            `Name=group-id,Values=${BACKEND_SG}`,
          ],
          { env: { ...process.env, ...env }, timeout: 30_000 },
          (err, so) => {
            if (err) reject(new Error(err.message));
            else resolve(so);
          },
        );
      });
      expect(JSON.parse(stdout)).toMatchObject({
        NetworkInterfaces: [{ Description: "ELB app/k8s-myapp-myappwor-0733a56cbb/4f1c2a9b7d3e8a60" }],
      });
    } finally {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGTERM");
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
