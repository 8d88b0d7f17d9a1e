/**
 * The start-up checks of a fleet: the bot serves no cluster itself (no kubeconfig of its own), so it
 * starts without a Kubernetes API to check; each cluster's workers still check theirs.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config.js";
import { checkStartup, StartupError } from "../../../src/startup.js";
import { REDIS_URL } from "../../helpers/redis.js";

describe("start-up checks in a fleet", () => {
  let dir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "unstuck-fleet-startup-"));
    const clusters = join(dir, "clusters.yaml");
    await writeFile(clusters, "clusters:\n  c1:\n    region: eu-west-1\n  c2:\n    region: us-east-1\n");
    env = {
      REDIS_URL,
      // Whatever the test Redis keeps, its fitness is not what this test is about.
      UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
      UNSTUCK_CLUSTERS_FILE: clusters,
      KUBECONFIG: join(dir, "no-such-kubeconfig"),
      UNSTUCK_STARTUP_TIMEOUT_SECONDS: "3",
    };
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("a fleet's bot starts without a Kubernetes API of its own", async () => {
    const report = await checkStartup(loadConfig({ ...env, UNSTUCK_ROLE: "bot" }));
    expect(report.ok).toContain("redis");
  });

  it("a fleet's worker still checks its cluster's API, and names it when it is missing", async () => {
    const refused = await checkStartup(
      loadConfig({ ...env, UNSTUCK_ROLE: "worker", UNSTUCK_CLUSTER_NAME: "c1" }),
    ).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(StartupError);
    expect((refused as Error).message).toMatch(/kube/i);
  });
});
