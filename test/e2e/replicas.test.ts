/**
 * Two bot processes and two worker processes on one Redis prefix at once, each built by
 * `createRuntime` as `main.ts` builds it (`UNSTUCK_ROLE=bot` / `worker`), against the kube simulator
 * with the seed incident and the fake Slack: the bots take signed commands and clicks over HTTP and
 * run no worker; the workers have no HTTP receiver and run every job.
 *
 * Slash commands sent alternately to both bots are each answered exactly once; a finalizer removal
 * requested through one bot and approved through the other is executed exactly once (one PATCH
 * reaches the API server), ends DONE, its message is repainted to DONE once, and the namespace wait
 * posts one "gone" message in the request's thread.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Runtime } from "../../src/runtime.js";
import { startTestWorld, type TestWorld } from "../helpers/world.js";
import type { KubeSim } from "../sim/kube/index.js";
import {
  blockActionsBody,
  postSigned,
  slashCommandBody,
  type FakeSlack,
  type SlackCall,
} from "../sim/slack/index.js";
import { buttonValue } from "./block-kit.js";
import { eventually, pause } from "../helpers/eventually.js";

const SECRET = "replicas-signing-secret";
const TOKEN = "xoxb-replicas-runtime-token";
const CHANNEL = "C0INCIDENT";
const REQUESTER = "U0ONCALL1";
const APPROVER = "U0APPROVER1";
const APPROVE = "approval:approve";

describe("two bot processes and two worker processes on one Redis", () => {
  let w: TestWorld;
  let sim: KubeSim;
  let fake: FakeSlack;
  const bots: Runtime[] = [];
  const workers: Runtime[] = [];
  const events: string[] = [];

  beforeAll(async () => {
    w = await startTestWorld({
      token: TOKEN,
      secret: SECRET,
      label: "replicas",
      kube: { scenario: "test/fixtures/scenarios/seed-incident.yaml", controllerIntervalMs: 200 },
      env: {
        UNSTUCK_APPROVERS: APPROVER,
        UNSTUCK_CHANNELS: CHANNEL,
        UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
        UNSTUCK_WAIT_INTERVAL_SECONDS: "1",
      },
      boot: false,
    });
    if (w.kube === undefined) throw new Error("the world has a kube simulator");
    sim = w.kube;
    fake = w.fake;
    for (let i = 0; i < 2; i++) {
      const bot = await w.boot({ role: "bot" });
      bots.push(bot.runtime);
      events.push(bot.events);
    }
    for (let i = 0; i < 2; i++) {
      // A worker (no signing secret: it receives nothing from Slack) listens on no port.
      const worker = await w.boot({ role: "worker" });
      workers.push(worker.runtime);
      expect(worker.port).toBeUndefined();
    }
  });

  afterAll(async () => {
    await w.stop();
  });

  const slash = async (bot: number, text: string, id: string): Promise<void> => {
    const res = await postSigned(
      events[bot] ?? "",
      SECRET,
      slashCommandBody({ text, userId: REQUESTER, channelId: CHANNEL, responseUrl: fake.responseUrl(id) }),
    );
    expect(res.status).toBe(200);
  };

  const click = async (bot: number, value: string, user: string, ts: string): Promise<void> => {
    const res = await postSigned(
      events[bot] ?? "",
      SECRET,
      blockActionsBody({
        actionId: APPROVE,
        value,
        userId: user,
        channelId: CHANNEL,
        messageTs: ts,
        responseUrl: fake.responseUrl(`click-${user}`),
      }),
    );
    expect(res.status).toBe(200);
  };

  it("bots receive and run no worker; workers run every queue's jobs and receive nothing", async () => {
    for (const b of bots) {
      expect(b.role).toBe("bot");
      expect(b.slack).toBeDefined();
    }
    for (const w of workers) {
      expect(w.role).toBe("worker");
      expect(w.slack).toBeUndefined();
    }
    // BullMQ names each worker's connection after its queue: only the two worker processes are there.
    for (const queue of [bots[0]?.queues.actions, bots[0]?.queues.waits]) {
      const connected = await eventually(
        async () => {
          const list = (await queue?.getWorkers()) ?? [];
          return list.length >= 2 ? list : undefined;
        },
        10_000,
        "two workers connected",
      );
      expect(connected).toHaveLength(2);
    }
  });

  it("answers each slash command exactly once, whichever bot it reaches", async () => {
    const namespaces = ["myapp", "payments", "argocd", "myapp"];
    fake.clear();
    for (const [i, ns] of namespaces.entries()) await slash(i % 2, `ns ${ns}`, `cmd-${String(i)}`);
    const answers = (): SlackCall[] =>
      fake.calls().filter((c) => c.method === "chat.postMessage" && c.body["thread_ts"] === undefined);
    await eventually(
      () => (answers().length + fake.responses().length >= namespaces.length ? true : undefined),
      30_000,
      "every command answered",
    );
    // Anything answered twice would show up by now.
    await pause(1_500);
    expect(answers().length + fake.responses().length).toBe(namespaces.length);
    // Public answers in the channel, and private ones (a namespace that is not stuck) to the asker.
    const about = (ns: string): number =>
      answers().filter((c) => String(c.body["text"]).includes(ns)).length +
      fake.responses().filter((r) => JSON.stringify(r).includes(`\`${ns}\``)).length;
    expect(about("payments")).toBe(1);
    expect(about("argocd")).toBeGreaterThanOrEqual(1);
    expect(about("myapp")).toBe(2);
  });

  it("executes an approval clicked through the other bot once: one PATCH, DONE, one repaint to DONE, one 'gone' message", async () => {
    fake.clear();
    await slash(
      0,
      'finalize ingress/myapp-worker-ingress -n myapp --reason "cause confirmed: SG held by an ENI; recovery first"',
      "request",
    );
    const posted = await fake.waitFor(
      "chat.postMessage",
      (c) => JSON.stringify(c.body).includes(APPROVE),
      20_000,
    );
    const id = buttonValue(posted.body["blocks"], APPROVE) ?? "";
    const ts = String(posted.response?.["ts"]);
    await eventually(
      async () => ((await bots[1]?.workflow.get(id))?.message !== undefined ? true : undefined),
      10_000,
      "request attached to its message",
    );

    sim.resetRequests();
    await click(1, id, APPROVER, ts);
    const done = await eventually(
      async () => {
        const r = await bots[0]?.workflow.get(id);
        return r?.state === "DONE" ? r : undefined;
      },
      20_000,
      "DONE",
    );
    expect(done.result?.outcome).toBe("done");

    // The namespace goes; the wait says so once in the request's thread.
    const gone = (): number => fake.thread(CHANNEL, ts).filter((m) => /is gone/i.test(m.text ?? "")).length;
    await eventually(() => (gone() > 0 ? true : undefined), 30_000, "the 'gone' message");
    const repaintedDone = (): SlackCall[] =>
      fake
        .calls()
        .filter(
          (c) => c.method === "chat.update" && c.body["ts"] === ts && String(c.body["text"]).includes("DONE"),
        );
    await eventually(() => (repaintedDone().length > 0 ? true : undefined), 10_000, "repainted DONE");
    // Duplicates, if any, would have arrived by now (four processes, jobs on two workers).
    await pause(2_000);

    const patches = sim.requests().filter((r) => r.method === "PATCH");
    expect(patches).toHaveLength(1);
    expect(patches[0]?.status).toBe(200);
    expect(repaintedDone()).toHaveLength(1);
    expect(gone()).toBe(1);
    const final = fake.message(CHANNEL, ts);
    expect(String(final?.text)).toContain("[DONE]");
    expect(JSON.stringify(final?.blocks)).not.toContain(APPROVE);
    // One execution in the audit log.
    const claimed = (await bots[0]?.audit.latest(100))?.filter(
      (e) => e.requestId === id && e.event === "execution.claimed",
    );
    expect(claimed).toHaveLength(1);
  });
});
