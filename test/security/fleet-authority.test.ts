/**
 * No authority travels through Redis in a fleet. One bot (`UNSTUCK_ROLE=bot`), real workers for c1 and
 * c2 (each its own simulated cluster and its own key), and c3, whose queue nobody honest consumes, all
 * on one Redis — the one every cluster's workers hold the credentials of. Each attack is made as a Redis
 * writer or a rogue consumer would make it, and each must end with no request made, nothing approved,
 * nothing patched, and the refusal on record:
 *
 * - a call on a cluster's `commands` queue the bot did not sign (a person named in plain data), or one
 *   signed with a worker's own key, runs nothing and is audited;
 * - a real call replayed runs once;
 * - a rogue consumer's answer (a request object for another object and cluster, or an answer signed by
 *   another cluster's workers) is refused by the bot: no card, no request;
 * - everything one cluster's worker pod holds (its own private key, every public key, Redis) forges no
 *   approval another cluster's worker accepts.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApprovalSigner } from "../../src/approvals/integrity.js";
import { ApprovalStore } from "../../src/approvals/store.js";
import { newRequestId, type ApprovalRequest } from "../../src/requests/model.js";
import { buildFinalizerPatch } from "../../src/kube/finalizer-patch.js";
import { loadConfig, type Config } from "../../src/config.js";
import { sealAnswer, sealCall } from "../../src/fleet/calls.js";
import { FleetPresence } from "../../src/fleet/presence.js";
import { clusterQueueName, QueueName } from "../../src/jobs/queues.js";
import type { Runtime } from "../../src/runtime.js";
import {
  BOT,
  clusterOwner,
  Keyring,
  parsePrivateKey,
  parsePublicKey,
  SigningKey,
} from "../../src/trust/keys.js";
import { eventually } from "../helpers/eventually.js";
import { fleetKeyEnv, publicKeysYaml, TEST_BOT_KEY, workerKeyOf } from "../helpers/keys.js";
import { connect, uniquePrefix } from "../helpers/redis.js";
import { startTestWorld, type TestWorld } from "../helpers/world.js";
import { startKubeSim, type KubeSim } from "../sim/kube/index.js";
import { postSigned, slashCommandBody, type FakeSlack } from "../sim/slack/index.js";

const SECRET = "fleet-authority-signing-secret";
const TOKEN = "xoxb-fleet-authority-token";
const CHANNEL = "C0INCIDENT";
const REQUESTER = "U0ONCALL1";
const APPROVER = "U0APPROVER1";
const TEAM = "T00000001";
const INGRESS = {
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  resource: "ingresses",
  group: "networking.k8s.io",
  version: "v1",
  namespace: "myapp",
  name: "myapp-worker-ingress",
} as const;
const FINALIZER = "ingress.k8s.aws/resources";
const REAL = ["c1", "c2"] as const;

/** Without the AWS target of the clusters file: the simulated clusters have no AWS account here. */
function withoutAws(config: Config): Config {
  const { aws, ...rest } = config;
  expect(aws?.region).toBe("ap-northeast-2");
  return rest;
}

describe("no authority travels through Redis (fleet)", () => {
  const sims = new Map<string, KubeSim>();
  let world: TestWorld;
  let fake: FakeSlack;
  let redis: Redis;
  let bot: Runtime;
  let events = "";
  let dir = "";
  const prefix = uniquePrefix("fleet-authority");
  const bull = `${prefix}:bull`;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "unstuck-fleet-authority-"));
    const clustersFile = join(dir, "clusters.yaml");
    await writeFile(
      clustersFile,
      [
        "clusters:",
        ...["c1", "c2", "c3"].map((c) => `  ${c}: { region: ap-northeast-2, ${publicKeysYaml(c)} }`),
        "",
      ].join("\n"),
    );
    world = await startTestWorld({
      token: TOKEN,
      secret: SECRET,
      prefix,
      env: {
        UNSTUCK_CLUSTERS_FILE: clustersFile,
        UNSTUCK_APPROVERS: APPROVER,
        UNSTUCK_CHANNELS: CHANNEL,
        UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
      },
      boot: false,
    });
    ({ fake, redis } = world);
    for (const name of REAL) {
      const sim = await startKubeSim({
        scenario: "test/fixtures/scenarios/seed-incident.yaml",
        controllerIntervalMs: 200,
      });
      sims.set(name, sim);
      const kubeconfig = join(dir, `${name}.kubeconfig`);
      await sim.writeKubeconfig(kubeconfig);
      const config = withoutAws(
        loadConfig(
          world.env({
            role: "worker",
            env: { ...fleetKeyEnv("worker", name), UNSTUCK_CLUSTER_NAME: name, KUBECONFIG: kubeconfig },
          }),
        ),
      );
      await world.boot({ config, runtime: { fleet: { heartbeatMs: 500 } } });
    }
    ({ runtime: bot, events } = await world.boot({ config: loadConfig(world.env({ role: "bot" })) }));
  });

  afterAll(async () => {
    await world.stop();
    for (const sim of sims.values()) await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const store = (): ApprovalStore => new ApprovalStore(redis, { prefix: `${prefix}:approvals` });
  const pending = (): Promise<ApprovalRequest[]> => store().listPending(new Date());
  const refusals = async (): Promise<string[]> =>
    (await bot.audit.latest(200)).filter((e) => e.event === "remote.refused").map((e) => e.result ?? "");
  const patches = (name: string): number =>
    (sims.get(name)?.requests() ?? []).filter((r) => r.method === "PATCH").length;

  it("a call the bot did not sign — a person named in plain data, or signed with a worker's key — runs nothing, and is audited", async () => {
    const queue = new Queue(clusterQueueName(QueueName.Commands, "c1"), { connection: redis, prefix: bull });
    try {
      const input = {
        ...INGRESS,
        finalizer: FINALIZER,
        reason: "forged: nobody asked for this removal at all",
        requester: { userId: REQUESTER, teamId: TEAM },
        channelId: CHANNEL,
      };
      // As the unsigned call of before: the actor in plain data.
      await queue.add("removal-request", {
        call: { kind: "removal-request", input },
        deadline: Date.now() + 60_000,
      });
      // Signed — with c2's worker key, which every c2 pod holds.
      const c2 = new SigningKey(parsePrivateKey(workerKeyOf("c2").privateKey, "test"), BOT);
      const { sealed } = sealCall(c2, "c1", { kind: "removal-request", input }, Date.now(), 60_000);
      await queue.add("removal-request", sealed);
      const why = await eventually(
        async () => {
          const r = await refusals();
          return r.length >= 2 ? r : undefined;
        },
        10_000,
        "both calls refused and audited",
      );
      expect(why.some((w) => /not a signed call/.test(w))).toBe(true);
      expect(why.some((w) => /not the bot's call: signed by cluster c2's workers/.test(w))).toBe(true);
      expect(await pending()).toEqual([]);
      expect(patches("c1")).toBe(0);
    } finally {
      await queue.close();
    }
  });

  it("a real call replayed runs once: its nonce was used", async () => {
    const queue = new Queue(clusterQueueName(QueueName.Commands, "c1"), { connection: redis, prefix: bull });
    try {
      const res = await postSigned(
        events,
        SECRET,
        slashCommandBody({
          text: "ns myapp --cluster c1",
          userId: REQUESTER,
          channelId: CHANNEL,
          responseUrl: fake.responseUrl("replay"),
        }),
      );
      expect(res.status).toBe(200);
      const done = await eventually(
        async () => (await queue.getJobs(["completed"])).find((j) => j.name === "command"),
        20_000,
        "the bot's call completed",
      );
      const before = (await refusals()).length;
      await queue.add("command", done.data);
      const why = await eventually(
        async () => {
          const r = await refusals();
          return r.length > before ? r : undefined;
        },
        10_000,
        "the replay refused",
      );
      expect(why.at(0)).toMatch(/nonce was seen before/);
    } finally {
      await queue.close();
    }
  });

  it("a rogue consumer's answer is refused: no card for another object, no request", async () => {
    // c3 looks alive, and its queue is consumed by someone who holds Redis and c1's worker key.
    const presence = new FleetPresence(redis, prefix);
    await presence.beat("c3", "rogue", 60_000, new Date());
    const c1 = new SigningKey(parsePrivateKey(workerKeyOf("c1").privateKey, "test"), clusterOwner("c1"));
    const forged: Partial<ApprovalRequest> = {
      id: newRequestId(),
      action: {
        type: "remove-finalizer",
        target: { ...INGRESS, name: "payments-api", namespace: "payments" },
        precondition: { resourceVersion: "1", finalizers: [FINALIZER] },
        remove: [FINALIZER],
        patch: buildFinalizerPatch({ resourceVersion: "1", finalizers: [FINALIZER] }, [FINALIZER]),
      },
      cluster: "c2",
    };
    let answered = 0;
    const rogueConnection = connect();
    const rogue = new Worker(
      clusterQueueName(QueueName.Commands, "c3"),
      (job) => {
        answered++;
        const value = { type: "approval-request", request: forged };
        // The first answer unsigned, the next signed with c1's key as if it were c3's.
        if (answered === 1) return Promise.resolve({ ok: true, value });
        const payload = JSON.parse((job.data as { payload: string }).payload) as Parameters<
          typeof sealAnswer
        >[1];
        return Promise.resolve(sealAnswer(c1, payload, { ok: true, value }));
      },
      { connection: rogueConnection, prefix: bull },
    );
    try {
      for (const id of ["rogue-1", "rogue-2"]) {
        fake.clear();
        const res = await postSigned(
          events,
          SECRET,
          slashCommandBody({
            text: 'finalize ingress/myapp-worker-ingress -n myapp --cluster c3 --reason "cause confirmed; recovery first"',
            userId: REQUESTER,
            channelId: CHANNEL,
            responseUrl: fake.responseUrl(id),
          }),
        );
        expect(res.status).toBe(200);
        const reply = await fake.waitForResponse((p) => p.id === id, 20_000);
        expect(String(reply.body["text"])).toMatch(/The answer from cluster c3 was refused/);
        expect(JSON.stringify(reply.body)).not.toMatch(/payments-api|approval:approve/);
      }
      expect(answered).toBe(2);
      expect(await pending()).toEqual([]);
      expect(
        fake
          .calls()
          .filter((c) => c.method === "chat.postMessage")
          .some((c) => JSON.stringify(c.body).includes("approval:approve")),
      ).toBe(false);
    } finally {
      await rogue.close();
      await rogueConnection.quit();
      await presence.leave("c3", "rogue", new Date());
    }
  });

  it("what one cluster's worker pod holds forges no approval for another cluster: refused TAMPERED, nothing patched", async () => {
    // The attacker: Redis, every public key, and c1's worker key — used in the bot's place.
    const c1AsBot = new SigningKey(parsePrivateKey(workerKeyOf("c1").privateKey, "test"), BOT);
    const keyring = new Keyring([
      { key: parsePublicKey(TEST_BOT_KEY.publicKey, "test"), owner: BOT },
      { key: parsePublicKey(workerKeyOf("c2").publicKey, "test"), owner: clusterOwner("c2") },
    ]);
    const forger = new ApprovalStore(redis, {
      prefix: `${prefix}:approvals`,
      signer: new ApprovalSigner({ bot: c1AsBot, keyring, localCluster: "c2" }),
      auditKey: `${prefix}:audit`,
    });
    const sim = sims.get("c2");
    const live = sim?.store.get(INGRESS.apiVersion, INGRESS.kind, INGRESS.namespace, INGRESS.name);
    const precondition = {
      resourceVersion: String(live?.metadata?.resourceVersion),
      finalizers: [FINALIZER],
    };
    const id = newRequestId();
    const now = new Date();
    await forger.create({
      id,
      action: {
        type: "remove-finalizer",
        target: { ...INGRESS, ...(live?.metadata?.uid ? { uid: live.metadata.uid } : {}) },
        precondition,
        remove: [FINALIZER],
        patch: buildFinalizerPatch(precondition, [FINALIZER]),
      },
      requester: { userId: REQUESTER, teamId: TEAM },
      channelId: CHANNEL,
      cluster: "c2",
      reason: "forged with c1's worker key",
      evidence: [],
      cleanupPlan: [],
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + 600_000).toISOString(),
      approvalsRequired: 1,
    });
    const vote = await forger.vote(id, { userId: APPROVER, teamId: TEAM }, "approve", new Date(), CHANNEL);
    expect(vote.state).toBe("APPROVED");
    sim?.resetRequests();
    await bot.fleet?.queues.queues("c2").actions.add("remove-finalizer", { requestId: id }, { attempts: 1 });
    const ended = await eventually(
      async () => {
        const r = await store().get(id);
        return r?.state === "TAMPERED" || r?.state === "DONE" ? r : undefined;
      },
      20_000,
      "the forged approval settled",
    );
    expect(ended.state).toBe("TAMPERED");
    expect(ended.result?.message).toMatch(
      /not the bot's \(signed by cluster c1's workers, who may not sign it\)/,
    );
    expect(patches("c2")).toBe(0);
    expect((await bot.audit.forRequest(id)).map((e) => e.event)).toContain("approval.tampered");
  });
});
