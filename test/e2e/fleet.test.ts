/**
 * A fleet: three simulated Kubernetes clusters (the seed incident in each), ONE bot process
 * (`UNSTUCK_ROLE=bot`, no kubeconfig of any cluster) and one worker process per cluster
 * (`UNSTUCK_ROLE=worker`, its own `KUBECONFIG` and `UNSTUCK_CLUSTER_NAME`), all on one Redis prefix,
 * with the clusters file every release of a fleet mounts. Each simulator's request log says which
 * cluster a command read or wrote: `--cluster c2` is answered from c2's API server only, a channel
 * mapped to c3 goes to c3 without the flag, an approved finalizer removal for c2 is patched by c2's
 * worker only, and an unknown cluster or one whose workers are stopped is answered at once. A card's
 * buttons name the cluster that produced it (the same namespace in c1 and c2, one channel: c2's card's
 * buttons run on c2), and a worker refuses an approved request of another cluster put on its queue.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, type Config } from "../../src/config.js";
import { takeClusterFlag } from "../../src/fleet/cluster-flag.js";
import { REQUESTER_STATEMENTS } from "../../src/requests/model.js";
import type { Runtime } from "../../src/runtime.js";
import { DiagnosisActionId, REQUEST_FINALIZE_ACTION } from "../../src/slack/blocks/diagnosis.js";
import { FINALIZE_SUBMIT_CALLBACK, FinalizeModalField } from "../../src/slack/finalize-form.js";
import { startKubeSim, type KubeSim } from "../sim/kube/index.js";
import {
  blockActionsBody,
  postSigned,
  slashCommandBody,
  type FakeSlack,
  viewSubmissionBody,
  type SlackCall,
} from "../sim/slack/index.js";
import { REPAIR_PATH_ACTION } from "../../src/slack/blocks/trace.js";
import { eventually } from "../helpers/eventually.js";
import { buttonValue } from "./block-kit.js";
import { fleetKeyEnv, publicKeysYaml } from "../helpers/keys.js";
import { startTestWorld, type TestWorld, type WorldRuntime } from "../helpers/world.js";

const SECRET = "fleet-signing-secret";
const TOKEN = "xoxb-fleet-runtime-token";
const CHANNEL = "C0INCIDENT";
/** Mapped to c3 in the clusters file. */
const C3_CHANNEL = "C0CLUSTER3";
const REQUESTER = "U0ONCALL1";
const APPROVER = "U0APPROVER1";
const APPROVE = "approval:approve";
const DETAILS = DiagnosisActionId.Details;
const FINALIZE = REQUEST_FINALIZE_ACTION;
const CLUSTERS = ["c1", "c2", "c3"] as const;
type ClusterName = (typeof CLUSTERS)[number];

/** Without the AWS target of the clusters file: the simulated clusters have no AWS account here. */
function withoutAws(config: Config): Config {
  const { aws, ...rest } = config;
  expect(aws?.region).toBe("ap-northeast-2");
  return rest;
}

describe("one bot, three clusters, one worker per cluster", () => {
  const sims = new Map<ClusterName, KubeSim>();
  const workers = new Map<ClusterName, WorldRuntime>();
  let w: TestWorld;
  let fake: FakeSlack;
  let bot: Runtime;
  let events = "";
  let dir = "";

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "unstuck-fleet-"));
    const clustersFile = join(dir, "clusters.yaml");
    await writeFile(
      clustersFile,
      [
        "clusters:",
        `  c1: { region: ap-northeast-2, ${publicKeysYaml("c1")} }`,
        `  c2: { region: ap-northeast-2, ${publicKeysYaml("c2")} }`,
        `  c3: { region: ap-northeast-2, channels: [${C3_CHANNEL}], ${publicKeysYaml("c3")} }`,
        "",
      ].join("\n"),
    );
    w = await startTestWorld({
      token: TOKEN,
      secret: SECRET,
      label: "fleet",
      env: {
        UNSTUCK_CLUSTERS_FILE: clustersFile,
        UNSTUCK_APPROVERS: APPROVER,
        UNSTUCK_CHANNELS: `${CHANNEL},${C3_CHANNEL}`,
        UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
        UNSTUCK_WAIT_INTERVAL_SECONDS: "1",
      },
      boot: false,
    });
    fake = w.fake;
    for (const name of CLUSTERS) {
      const sim = await startKubeSim({
        scenario: "test/fixtures/scenarios/seed-incident.yaml",
        controllerIntervalMs: 200,
      });
      sims.set(name, sim);
      const kubeconfig = join(dir, `${name}.kubeconfig`);
      await sim.writeKubeconfig(kubeconfig);
      // A worker receives nothing from Slack; its Kubernetes is its own KUBECONFIG.
      const config = withoutAws(
        loadConfig(
          w.env({
            role: "worker",
            env: { ...fleetKeyEnv("worker", name), UNSTUCK_CLUSTER_NAME: name, KUBECONFIG: kubeconfig },
          }),
        ),
      );
      workers.set(name, await w.boot({ config, runtime: { fleet: { heartbeatMs: 500 } } }));
    }
    // The bot names no cluster and has no kubeconfig of any.
    const botConfig = loadConfig(w.env({ role: "bot" }));
    expect(botConfig.fleet?.clusters.map((c) => c.name)).toEqual([...CLUSTERS]);
    expect(botConfig.aws).toBeUndefined();
    ({ runtime: bot, events } = await w.boot({ config: botConfig }));
  });

  afterAll(async () => {
    await w.stop();
    for (const sim of sims.values()) await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const slash = async (text: string, id: string, channelId = CHANNEL): Promise<void> => {
    const res = await postSigned(
      events,
      SECRET,
      slashCommandBody({ text, userId: REQUESTER, channelId, responseUrl: fake.responseUrl(id) }),
    );
    expect(res.status).toBe(200);
  };

  const resetSims = (): void => {
    for (const sim of sims.values()) sim.resetRequests();
  };

  /** Requests about a namespace each simulator served (background discovery excluded). */
  const reads = (namespace: string): Record<ClusterName, number> => {
    const count = (name: ClusterName): number =>
      (sims.get(name)?.requests() ?? []).filter((r) => r.path.includes(`/namespaces/${namespace}`)).length;
    return { c1: count("c1"), c2: count("c2"), c3: count("c3") };
  };
  const myappReads = (): Record<ClusterName, number> => reads("myapp");

  const answer = (channel: string, about: string): Promise<SlackCall> =>
    fake.waitFor(
      "chat.postMessage",
      (c) =>
        c.body["channel"] === channel &&
        c.body["thread_ts"] === undefined &&
        String(c.body["text"]).includes(about),
      20_000,
    );

  it("answers `--cluster c2` from c2's API server, and only c2's worker ran it", async () => {
    fake.clear();
    resetSims();
    await slash("ns myapp --cluster c2", "ns-c2");
    const posted = await answer(CHANNEL, "myapp");
    expect(String(posted.body["text"])).toMatch(/myapp/);
    const reads = myappReads();
    expect(reads.c2).toBeGreaterThan(0);
    expect(reads.c1).toBe(0);
    expect(reads.c3).toBe(0);
  });

  it("routes a channel mapped to c3 there without the flag", async () => {
    fake.clear();
    resetSims();
    await slash("ns myapp", "ns-c3", C3_CHANNEL);
    await answer(C3_CHANNEL, "myapp");
    const reads = myappReads();
    expect(reads.c3).toBeGreaterThan(0);
    expect(reads.c1).toBe(0);
    expect(reads.c2).toBe(0);
  });

  it("asks which cluster when neither the flag nor the channel names one", async () => {
    fake.clear();
    resetSims();
    await slash("ns myapp", "ns-unmapped");
    const reply = await fake.waitForResponse((p) => p.id === "ns-unmapped", 5_000);
    expect(String(reply.body["text"])).toMatch(/Which cluster\?.*--cluster NAME.*c1, c2, c3/);
    expect(myappReads()).toEqual({ c1: 0, c2: 0, c3: 0 });
  });

  it("sends a card's buttons to the cluster that produced the card, the same namespace in two clusters", async () => {
    // The same namespace, stuck in c1 and in c2, diagnosed in one channel: two cards.
    const cards = new Map<ClusterName, SlackCall>();
    for (const name of ["c1", "c2"] as const) {
      fake.clear();
      await slash(`ns myapp --cluster ${name}`, `card-${name}`);
      cards.set(name, await answer(CHANNEL, "myapp"));
    }
    const valueOf = (name: ClusterName, action: string): Record<string, unknown> =>
      JSON.parse(buttonValue(cards.get(name)?.body["blocks"], action) ?? "{}") as Record<string, unknown>;
    expect(valueOf("c1", DETAILS)).toEqual({ namespace: "myapp", cluster: "c1" });
    expect(valueOf("c2", DETAILS)).toEqual({ namespace: "myapp", cluster: "c2" });
    expect(valueOf("c2", FINALIZE)).toMatchObject({ name: "myapp-worker-ingress", cluster: "c2" });
    const c2Ts = String(cards.get("c2")?.response?.["ts"]);

    // *Details* on c2's card: read on c2 only, answered in that card's thread.
    fake.clear();
    resetSims();
    const click = await postSigned(
      events,
      SECRET,
      blockActionsBody({
        actionId: DETAILS,
        value: JSON.stringify(valueOf("c2", DETAILS)),
        userId: REQUESTER,
        channelId: CHANNEL,
        messageTs: c2Ts,
        responseUrl: fake.responseUrl("details-c2"),
      }),
    );
    expect(click.status).toBe(200);
    await fake.waitFor("chat.postMessage", (c) => c.body["thread_ts"] === c2Ts, 20_000);
    expect(myappReads().c2).toBeGreaterThan(0);
    expect(myappReads()).toMatchObject({ c1: 0, c3: 0 });

    // *Request finalizer removal* on c2's card: its form carries c2, and the request is c2's.
    fake.clear();
    resetSims();
    await postSigned(
      events,
      SECRET,
      blockActionsBody({
        actionId: FINALIZE,
        value: JSON.stringify(valueOf("c2", FINALIZE)),
        userId: REQUESTER,
        channelId: CHANNEL,
        messageTs: c2Ts,
        responseUrl: fake.responseUrl("finalize-c2"),
      }),
    );
    const opened = await fake.waitFor("views.open", () => true, 10_000);
    const view = opened.body["view"] as Record<string, unknown>;
    expect(JSON.parse(String(view["private_metadata"]))).toMatchObject({ cluster: "c2" });
    const submitted = await postSigned(
      events,
      SECRET,
      viewSubmissionBody({
        callbackId: FINALIZE_SUBMIT_CALLBACK,
        privateMetadata: String(view["private_metadata"]),
        values: {
          [FinalizeModalField.Reason]: {
            [FinalizeModalField.Reason]: "cause confirmed: SG held by an ENI; recovery first",
          },
          [FinalizeModalField.Finalizer]: { [FinalizeModalField.Finalizer]: null },
          ...Object.fromEntries(
            REQUESTER_STATEMENTS.map((st) => [st.id, { [st.id]: { selected: [st.id] } }]),
          ),
        },
        userId: REQUESTER,
      }),
    );
    expect(submitted.status).toBe(200);
    const posted = await fake.waitFor(
      "chat.postMessage",
      (c) => JSON.stringify(c.body).includes(APPROVE),
      20_000,
    );
    const id = buttonValue(posted.body["blocks"], APPROVE) ?? "";
    expect((await bot.workflow.get(id))?.cluster).toBe("c2");
    expect(myappReads().c2).toBeGreaterThan(0);
    expect(myappReads()).toMatchObject({ c1: 0, c3: 0 });
    // Cancelled: the next test asks for c2's removal by command.
    await bot.workflow.cancel(id, { userId: REQUESTER, teamId: "T00000001" });

    // A button posted before buttons named their cluster still works: the cluster is chosen as
    // before (here the one whose card about myapp is in the c3 channel).
    fake.clear();
    resetSims();
    await postSigned(
      events,
      SECRET,
      blockActionsBody({
        actionId: DETAILS,
        value: JSON.stringify({ namespace: "myapp" }),
        userId: REQUESTER,
        channelId: C3_CHANNEL,
        messageTs: "1700000000.000300",
        responseUrl: fake.responseUrl("details-old"),
      }),
    );
    await fake.waitFor("chat.postMessage", (c) => c.body["thread_ts"] === "1700000000.000300", 20_000);
    expect(myappReads().c3).toBeGreaterThan(0);
    expect(myappReads()).toMatchObject({ c1: 0, c2: 0 });
    // A cluster the fleet does not have is refused, not guessed.
    fake.clear();
    resetSims();
    await postSigned(
      events,
      SECRET,
      blockActionsBody({
        actionId: DETAILS,
        value: JSON.stringify({ namespace: "myapp", cluster: "prod-us" }),
        userId: REQUESTER,
        channelId: CHANNEL,
        messageTs: c2Ts,
        responseUrl: fake.responseUrl("details-unknown"),
      }),
    );
    const refused = await fake.waitForResponse((p) => p.id === "details-unknown", 10_000);
    expect(String(refused.body["text"])).toMatch(
      /Unknown cluster &quot;prod-us&quot;|Unknown cluster "prod-us"/,
    );
    expect(myappReads()).toEqual({ c1: 0, c2: 0, c3: 0 });
  });

  it("a *Fix the path* naming a cluster the fleet does not have says so in its form; nothing is read", async () => {
    fake.clear();
    resetSims();
    await postSigned(
      events,
      SECRET,
      blockActionsBody({
        actionId: REPAIR_PATH_ACTION,
        value: JSON.stringify({ ns: "myapp", cluster: "prod-us" }),
        userId: REQUESTER,
        channelId: CHANNEL,
        messageTs: "1700000000.000400",
        responseUrl: fake.responseUrl("repair-unknown"),
        triggerId: "1337.9.fleet",
      }),
    );
    const form = await eventually(
      () => {
        const v = fake.views().find((x) => x.triggerId === "1337.9.fleet")?.view;
        return v && /Unknown cluster/.test(JSON.stringify(v)) ? v : undefined;
      },
      10_000,
      "the form saying the cluster is unknown",
    );
    // An answer, not a form: no reason is asked for.
    expect(form["submit"]).toBeUndefined();
    expect(myappReads()).toEqual({ c1: 0, c2: 0, c3: 0 });
  });

  it("executes an approved finalizer removal for c2 on c2's worker only", async () => {
    fake.clear();
    await slash(
      'finalize ingress/myapp-worker-ingress -n myapp --cluster c2 --reason "cause confirmed: SG held by an ENI; recovery first"',
      "request",
    );
    const posted = await fake.waitFor(
      "chat.postMessage",
      (c) => JSON.stringify(c.body).includes(APPROVE),
      20_000,
    );
    const id = buttonValue(posted.body["blocks"], APPROVE) ?? "";
    const ts = String(posted.response?.["ts"]);
    const request = await eventually(
      async () => {
        const r = await bot.workflow.get(id);
        return r?.message !== undefined ? r : undefined;
      },
      10_000,
      "request attached to its message",
    );
    // The cluster is part of the signed request.
    expect(request.cluster).toBe("c2");

    resetSims();
    const res = await postSigned(
      events,
      SECRET,
      blockActionsBody({
        actionId: APPROVE,
        value: id,
        userId: APPROVER,
        channelId: CHANNEL,
        messageTs: ts,
        responseUrl: fake.responseUrl("click"),
      }),
    );
    expect(res.status).toBe(200);
    const done = await eventually(
      async () => {
        const r = await bot.workflow.get(id);
        return r?.state === "DONE" ? r : undefined;
      },
      20_000,
      "DONE",
    );
    expect(done.result?.outcome).toBe("done");
    const patches = (name: ClusterName): number =>
      (sims.get(name)?.requests() ?? []).filter((r) => r.method === "PATCH").length;
    expect(patches("c2")).toBe(1);
    expect(patches("c1")).toBe(0);
    expect(patches("c3")).toBe(0);
    // c2's object lost its finalizer; the same object in c1 and c3 still has it.
    // (c2's may be gone altogether: it was only waiting for its finalizer.)
    const finalizers = (name: ClusterName): unknown =>
      sims.get(name)?.store.get("networking.k8s.io/v1", "Ingress", "myapp", "myapp-worker-ingress")?.metadata
        ?.finalizers ?? [];
    expect(finalizers("c1")).not.toEqual([]);
    expect(finalizers("c3")).not.toEqual([]);
    expect(finalizers("c2")).toEqual([]);
  });

  it("a worker refuses another cluster's approved request put on its queue: FAILED, audited, nothing patched", async () => {
    // c1's actions queue held back, so the job the approval enqueues there waits.
    const c1Actions = bot.fleet?.queues.queues("c1").actions;
    const c2Actions = bot.fleet?.queues.queues("c2").actions;
    if (c1Actions === undefined || c2Actions === undefined) throw new Error("the bot has no fleet queues");
    await c1Actions.pause();
    try {
      fake.clear();
      await slash(
        'finalize ingress/myapp-worker-ingress -n myapp --cluster c1 --reason "cause confirmed: SG held by an ENI; recovery first"',
        "request-c1",
      );
      const posted = await fake.waitFor(
        "chat.postMessage",
        (c) => JSON.stringify(c.body).includes(APPROVE),
        20_000,
      );
      const id = buttonValue(posted.body["blocks"], APPROVE) ?? "";
      const ts = String(posted.response?.["ts"]);
      await eventually(async () => (await bot.workflow.get(id))?.message, 10_000, "request attached");
      expect((await bot.workflow.get(id))?.cluster).toBe("c1");
      await postSigned(
        events,
        SECRET,
        blockActionsBody({
          actionId: APPROVE,
          value: id,
          userId: APPROVER,
          channelId: CHANNEL,
          messageTs: ts,
          responseUrl: fake.responseUrl("approve-c1"),
        }),
      );
      const job = await eventually(
        async () => (await c1Actions.getJobs(["waiting"]))[0],
        10_000,
        "c1's execution job",
      );
      resetSims();
      // The same job, put on c2's queue by hand (a mis-routed or forged job).
      await c2Actions.add(job.name, job.data, { attempts: 1 });
      const failed = await eventually(
        async () => {
          const r = await bot.workflow.get(id);
          return r?.state === "FAILED" ? r : undefined;
        },
        20_000,
        "FAILED",
      );
      expect(failed.result?.message).toMatch(/request is for cluster c1, but this worker serves cluster c2/);
      const events_ = (await bot.audit.forRequest(id)).map((e) => e.event);
      expect(events_).toContain("execution.wrong-cluster");
      const patches = (name: ClusterName): number =>
        (sims.get(name)?.requests() ?? []).filter((r) => r.method === "PATCH").length;
      expect(patches("c2")).toBe(0);
      expect(patches("c1")).toBe(0);
    } finally {
      await c1Actions.resume();
    }
  });

  it("answers a command for an unknown cluster at once, naming the clusters", async () => {
    fake.clear();
    resetSims();
    const started = Date.now();
    // (`payments`: c2's namespace wait after the removal above keeps reading `myapp`.)
    await slash("ns payments --cluster prod-us", "unknown");
    const reply = await fake.waitForResponse((p) => p.id === "unknown", 5_000);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(String(reply.body["text"])).toMatch(/Unknown cluster "prod-us": this bot serves c1, c2, c3/);
    expect(reads("payments")).toEqual({ c1: 0, c2: 0, c3: 0 });
  });

  it("lists the clusters and whether each is live", async () => {
    fake.clear();
    await slash("clusters", "clusters");
    const reply = await fake.waitForResponse((p) => p.id === "clusters", 5_000);
    const blocks = JSON.stringify(reply.body["blocks"]);
    for (const name of CLUSTERS) expect(blocks).toContain(`${name} live (1 worker)`);
  });

  it("answers a command for a cluster whose workers are stopped at once, saying when it was last seen", async () => {
    await workers.get("c1")?.stop();
    fake.clear();
    resetSims();
    const started = Date.now();
    await slash("ns payments --cluster c1", "stopped");
    const reply = await fake.waitForResponse((p) => p.id === "stopped", 5_000);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(String(reply.body["text"])).toMatch(/Cluster c1 has no live workers \(last seen \d+ s ago\)/);
    expect(reads("payments")).toEqual({ c1: 0, c2: 0, c3: 0 });
    // The others still answer.
    await slash("ns payments --cluster c3", "still-c3");
    // (A namespace that is not stuck may be answered to the asker only: either way, c3 answered.)
    await Promise.race([
      answer(CHANNEL, "payments"),
      fake.waitForResponse((p) => p.id === "still-c3" && JSON.stringify(p.body).includes("payments"), 20_000),
    ]);
    expect(reads("payments")).toMatchObject({ c1: 0, c2: 0 });
    expect(reads("payments").c3).toBeGreaterThan(0);
  });

  it("reads the fleet's rules from the clusters file, and the flag only outside quotes", () => {
    const file = (yaml: string) => (): string => yaml;
    const base = { UNSTUCK_CLUSTERS_FILE: "/clusters.yaml", UNSTUCK_ROLE: "worker" };
    const two = "clusters:\n  a: { region: r }\n  b: { region: r }\n";
    expect(() => loadConfig(base, file(two))).toThrow(/UNSTUCK_CLUSTER_NAME/);
    expect(loadConfig({ ...base, UNSTUCK_CLUSTER_NAME: "b" }, file(two)).fleet?.clusters).toHaveLength(2);
    expect(() =>
      loadConfig(
        { ...base, UNSTUCK_CLUSTER_NAME: "a" },
        file("clusters:\n  a: { region: r, channels: [C0AB] }\n  b: { region: r, channels: [C0AB] }\n"),
      ),
    ).toThrow(/channel C0AB is mapped to both a and b/);
    // One cluster: a single-cluster install, today's queue names.
    expect(loadConfig(base, file("clusters:\n  a: { region: r }\n")).fleet).toBeUndefined();

    expect(takeClusterFlag('finalize x --reason "not --cluster c9" --cluster=c2')).toEqual({
      text: 'finalize x --reason "not --cluster c9"',
      cluster: "c2",
    });
    expect(takeClusterFlag("ns myapp")).toEqual({ text: "ns myapp" });
    expect(() => takeClusterFlag("ns myapp --cluster")).toThrow(/needs the name of a cluster/);
    expect(() => takeClusterFlag("ns --cluster a myapp --cluster b")).toThrow(/Name one cluster/);
  });
});
