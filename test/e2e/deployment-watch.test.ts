/**
 * The bot keeps every Deployment current by a watch: `/unstuck ns` on a namespace held by a
 * finalizer nobody knows guesses its controller from every Deployment of the cluster, and once the
 * watch is up the bot reads none of them from the API server (the CLI lists them every time). A
 * Deployment added or deleted reaches the next answer through the watch; a watch the bot may not
 * open leaves every answer right, read from the API server.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "../helpers/eventually.js";
import { startTestWorld, type TestWorld } from "../helpers/world.js";
import { startKubeSim, type KubeSim, type RequestRecord } from "../sim/kube/index.js";
import { postSigned, slashCommandBody } from "../sim/slack/index.js";
import { askTerminal, CHANNEL, fromConfigEnv } from "./ask-ns.js";

const NS = "shop";
const FINALIZER = "gizmo.acmecorp.io/cleanup";
const DEPLOYMENTS = "/apis/apps/v1/deployments";

const isWatch = (r: RequestRecord): boolean => /[?&]watch=(1|true)\b/.test(r.query);
const deploymentLists = (sim: KubeSim): RequestRecord[] =>
  sim.requests().filter((r) => r.method === "GET" && r.path === DEPLOYMENTS && !isWatch(r));

function deployment(namespace: string, name: string, labels: Record<string, string> = {}) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace, labels: { app: name, ...labels } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "main", image: `registry.example/${name}:1.0` }] },
      },
    },
  };
}

/** A namespace held by one ConfigMap with an unknown finalizer, and `others` unrelated Deployments. */
function seed(sim: KubeSim, others: number): void {
  for (const name of [NS, "gizmo-system", ...Array.from({ length: 7 }, (_, i) => `team-${i}`)])
    sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
  for (let i = 0; i < others; i++) sim.store.create(deployment(`team-${i % 7}`, `svc-${i}`));
  sim.store.create({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "held", namespace: NS, finalizers: [FINALIZER] },
  });
  sim.store.delete("v1", "Namespace", undefined, NS);
}

describe("the bot's Deployments, kept by a watch", () => {
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    while (stops.length > 0) await stops.pop()?.();
  });

  async function world(forbidWatch = false): Promise<{ sim: KubeSim; w: TestWorld; kubeconfig: string }> {
    const sim = await startKubeSim({ controllerIntervalMs: 3_600_000, bookmarkIntervalMs: 200 });
    stops.push(() => sim.stop());
    seed(sim, 30);
    const dir = await mkdtemp(join(tmpdir(), "unstuck-deployment-watch-"));
    stops.push(() => rm(dir, { recursive: true, force: true }));
    const kubeconfig = join(dir, "kubeconfig");
    await sim.writeKubeconfig(kubeconfig);
    if (forbidWatch) sim.setFaults({ forbid: [{ verb: "watch", resource: "deployments", group: "apps" }] });
    const w = await startTestWorld({
      label: "deployment-watch",
      simServices: false,
      env: fromConfigEnv(kubeconfig),
    });
    stops.push(() => w.stop());
    return { sim, w, kubeconfig };
  }

  let asked = 0;
  /** `/unstuck ns shop` through the signed slash command; the answer's text and blocks. */
  async function ask(w: TestWorld): Promise<string> {
    const id = `ns-${++asked}`;
    const responseUrl = w.fake.responseUrl(id);
    const before = w.fake.calls().length;
    const res = await postSigned(
      w.events,
      w.secret,
      slashCommandBody({ text: `ns ${NS}`, userId: "U0ONCALL1", channelId: CHANNEL, responseUrl }),
    );
    expect(res.status).toBe(200);
    const answer = await eventually(
      () =>
        w.fake
          .calls()
          .slice(before)
          .find((c) => c.method === "chat.postMessage" && c.body["channel"] === CHANNEL)?.body ??
        w.fake.responses().find((r) => r.id === id)?.body,
      30_000,
      "the answer",
    );
    return `${String(answer["text"])}\n${JSON.stringify(answer["blocks"])}`;
  }

  it("answers from the watch once it is up, and sees a Deployment added and deleted", async () => {
    const { sim, w, kubeconfig } = await world();
    // The first ask lists them (and starts the watch); once it is up, an ask lists none.
    expect(await ask(w)).not.toContain("gizmo-controller");
    expect(deploymentLists(sim).length).toBeGreaterThan(0);
    await eventually(
      async () => {
        sim.resetRequests();
        await ask(w);
        return deploymentLists(sim).length === 0 ? true : undefined;
      },
      10_000,
      "an answer with no Deployment list",
    );

    sim.store.create(deployment("gizmo-system", "gizmo-controller"));
    await eventually(
      async () => ((await ask(w)).includes("gizmo-controller") ? true : undefined),
      5_000,
      "the new Deployment in the answer",
    );
    sim.store.delete("apps/v1", "Deployment", "gizmo-system", "gizmo-controller");
    await eventually(
      async () => (!(await ask(w)).includes("gizmo-controller") ? true : undefined),
      5_000,
      "the deleted Deployment gone from the answer",
    );
    sim.resetRequests();
    await ask(w);
    expect(deploymentLists(sim)).toEqual([]);

    // The terminal keeps no watch: it lists every time.
    sim.resetRequests();
    const cli = await askTerminal(["ns", NS, "--kubeconfig", kubeconfig]);
    expect(cli.text).toContain(FINALIZER);
    expect(deploymentLists(sim).length).toBeGreaterThan(0);
  });

  it("with the watch forbidden, every answer reads the Deployments from the API server", async () => {
    const { sim, w } = await world(true);
    await ask(w);
    await eventually(
      () =>
        sim.requests().some((r) => isWatch(r) && r.path === DEPLOYMENTS && r.status === 403)
          ? true
          : undefined,
      5_000,
      "the forbidden watch",
    );
    sim.store.create(deployment("gizmo-system", "gizmo-controller"));
    sim.resetRequests();
    expect(await ask(w)).toContain("gizmo-controller");
    expect(deploymentLists(sim).length).toBeGreaterThan(0);
  });
});
