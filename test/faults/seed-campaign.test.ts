/**
 * A seeded fault campaign over the whole seed incident, through the runtime's own wiring: a bot
 * process and a second worker process (the chart's default of two) on one real Redis, the fake
 * Slack, and the simulated world. Each run: `finalize` → approved → the namespace goes → Argo CD
 * re-creates it → the bot offers the repair → approved → Route 53 INSYNC, CloudFront Deployed, both
 * names answering 200 — with one fault, drawn from the run's seed, injected at one drawn step:
 * Slack 429s or 5xx, Kubernetes 429s, a PATCH whose answer is lost after it applied, AWS throttling,
 * the second worker stopped and replaced, or the second worker — then a process of its own, the real
 * entry point — killed with SIGKILL (its jobs are taken over once their locks lapse), or Redis
 * restarted (a private redis-server with an append-only file, stopped and started on its port).
 *
 * Every run must end with: one finalizer PATCH, one Route 53 change and one CloudFront update applied
 * (no doubled write), both requests DONE (no lost request), no message said twice in a thread (no
 * doubled reply), the namespace's follow-ups and every wait's result posted (no lost follow-up),
 * and every status message ending on its result (no stale status line).
 *
 * `UNSTUCK_CAMPAIGN_SEED` replays a campaign (its seed is printed); `UNSTUCK_CAMPAIGN_RUNS` sets how
 * many runs (default 30); `UNSTUCK_CAMPAIGN_FAULT` keeps every run to one fault kind.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPAIR_PATH_ACTION } from "../../src/slack/blocks/trace.js";
import { postSigned, slashCommandBody, viewSubmissionBody, type FakeSlack } from "../sim/slack/index.js";
import type { World } from "../sim/world.js";
import { buttonValue } from "../e2e/block-kit.js";
import { FAST_LBC } from "../integration/helpers/aws-world.js";
import { recreateSeed } from "../sim/argo-sync.js";
import { eventually, pause } from "../helpers/eventually.js";
import { mulberry32 } from "../security/hostile.js";
import { runMain, startPrivateRedis, stopChild, type MainRun } from "./helpers.js";
import { clickButton } from "../helpers/slack-click.js";
import { startTestWorld, type WorldRuntime } from "../helpers/world.js";

const SECRET = "campaign-signing-secret";
const TOKEN = "xoxb-campaign-token";
const CHANNEL = "C0INCIDENT";
const REQUESTER = "U0ONCALL1";
const APPROVER = "U0APPROVER1";
const APPROVE = "approval:approve";
const INGRESS = "/apis/networking.k8s.io/v1/namespaces/myapp/ingresses/myapp-worker-ingress";

const RUNS = Number(process.env["UNSTUCK_CAMPAIGN_RUNS"] ?? "30");
const SEED = Number(process.env["UNSTUCK_CAMPAIGN_SEED"] ?? String(Date.now() % 1_000_000_007));

const FAULTS = [
  "slack-429",
  "slack-update-5xx",
  "kube-429",
  "kube-lost-patch",
  "aws-throttle",
  "worker-replaced",
  "worker-killed",
  "redis-restart",
] as const;
type Fault = (typeof FAULTS)[number];
/** Where in the flow the fault is injected. */
const STEPS = ["start", "approved", "recreated", "repair-approved"] as const;
type Step = (typeof STEPS)[number];
/** `UNSTUCK_CAMPAIGN_FAULT` keeps to one fault kind (to study it); the steps are still drawn. */
const ONLY = FAULTS.find((f) => f === process.env["UNSTUCK_CAMPAIGN_FAULT"]);
if (process.env["UNSTUCK_CAMPAIGN_FAULT"] !== undefined && ONLY === undefined)
  throw new Error(`UNSTUCK_CAMPAIGN_FAULT must be one of ${FAULTS.join(", ")}`);

interface Run {
  readonly world: World;
  readonly fake: FakeSlack;
  readonly prefix: string;
  /** The bot (or `all`) first, then the in-process workers. */
  readonly runtimes: WorldRuntime[];
  events: string;
  readonly startWorker: () => Promise<WorldRuntime>;
  /** The second worker as a process of its own (the `worker-killed` runs), until it is killed. */
  child?: MainRun;
  /** Restarts the run's own redis-server (`redis-restart` runs: the shared one is never restarted). */
  readonly restartRedis: () => Promise<void>;
  readonly close: () => Promise<void>;
}

async function startRun(fault: Fault): Promise<Run> {
  const dir = await mkdtemp(join(tmpdir(), "unstuck-campaign-"));
  // Persisted at every write, as a Redis that is a system of record must be.
  const redisArgs = ["--dir", dir, "--appendonly", "yes", "--appendfsync", "always", "--save", ""];
  let privateRedis = fault === "redis-restart" ? await startPrivateRedis(redisArgs) : undefined;
  const w = await startTestWorld({
    token: TOKEN,
    secret: SECRET,
    label: "campaign",
    sim: {
      scenario: "test/fixtures/scenarios/seed-incident.yaml",
      lbc: FAST_LBC,
      controllerIntervalMs: 50,
      cloudFrontDeployMs: 1_500,
      route53SyncMs: 500,
    },
    awsMaxAttempts: 3,
    env: {
      UNSTUCK_APPROVERS: APPROVER,
      UNSTUCK_CHANNELS: CHANNEL,
      UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
      UNSTUCK_HEALTH_PATHS: "/",
      UNSTUCK_SHUTDOWN_TIMEOUT_SECONDS: "2",
      // Restarted on its own port: the URL holds.
      ...(privateRedis !== undefined ? { REDIS_URL: privateRedis.url } : {}),
    },
    runtime: {
      edgeWaits: { intervalMs: 200, maxIntervalMs: 400 },
      pathRecheck: { intervalMs: 300 },
      // A killed process's jobs are found stalled soon after their locks lapse.
      worker: { stalledInterval: 500 },
    },
    boot: false,
  });
  const world = w.sim;
  if (world === undefined) throw new Error("the world has its simulators");
  const runtimes: WorldRuntime[] = [];
  // With a process to kill, that process is the only worker until then: the kill strands its work.
  const bot = await w.boot({ role: fault === "worker-killed" ? "bot" : "all" });
  runtimes.push(bot);
  const run: Run = {
    world,
    fake: w.fake,
    prefix: w.prefix,
    runtimes,
    events: bot.events,
    startWorker: async () => {
      const worker = await w.boot({ role: "worker" });
      runtimes.push(worker);
      return worker;
    },
    restartRedis: async () => {
      if (privateRedis === undefined) return;
      const { port } = privateRedis;
      await privateRedis.stop();
      privateRedis = await startPrivateRedis(redisArgs, port);
    },
    close: async () => {
      if (run.child !== undefined) await stopChild(run.child.child);
      await w.stop();
      await privateRedis?.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
  if (fault === "worker-killed") {
    // The real entry point, as the chart runs a worker pod: its AWS, DNS and probes from the environment.
    const kubeconfig = join(dir, "kubeconfig");
    await world.kube.writeKubeconfig(kubeconfig);
    const child = runMain(
      w.env({
        role: "worker",
        env: {
          KUBECONFIG: kubeconfig,
          UNSTUCK_CLUSTER_NAME: "prod-eks",
          UNSTUCK_WAIT_INTERVAL_SECONDS: "1",
          UNSTUCK_LOG_LEVEL: "info",
        },
      }),
    );
    run.child = child;
    await eventually(
      () => (child.stdout().includes("unstuck is running") ? true : undefined),
      30_000,
      `the worker process started (stderr: ${child.stderr().slice(0, 500)})`,
    );
  } else {
    await run.startWorker();
  }
  return run;
}

async function slash(r: Run, text: string): Promise<void> {
  const res = await postSigned(
    r.events,
    SECRET,
    slashCommandBody({ text, userId: REQUESTER, channelId: CHANNEL, responseUrl: r.fake.responseUrl("cmd") }),
  );
  expect(res.status).toBe(200);
}

function click(r: Run, actionId: string, value: string, user: string, ts: string, trigger?: string) {
  return clickButton(
    { events: r.events, fake: r.fake, secret: SECRET, channel: CHANNEL },
    actionId,
    value,
    user,
    ts,
    trigger,
  );
}

/** The approval card posted for a request whose blocks contain `marker`, once the bot knows its message. */
async function requestCard(r: Run, marker: string): Promise<{ id: string; ts: string }> {
  // The post Slack took (a refused one has no message); polled, since a call is announced before
  // its answer is known.
  const post = await eventually(
    () =>
      r.fake.calls().find((c) => {
        const blocks = JSON.stringify(c.body["blocks"] ?? "");
        return (
          c.method === "chat.postMessage" &&
          c.response?.["ok"] === true &&
          blocks.includes(APPROVE) &&
          blocks.includes(marker)
        );
      }),
    60_000,
    `the approval card for ${marker}`,
  );
  const id = buttonValue(post.body["blocks"], APPROVE) ?? "";
  const ts = String(post.response?.["ts"]);
  const bot = r.runtimes[0];
  await eventually(
    async () => ((await bot?.runtime.workflow.get(id))?.message ? true : undefined),
    15_000,
    "the request's message recorded",
  );
  return { id, ts };
}

async function inject(r: Run, fault: Fault, random: () => number): Promise<void> {
  const times = 1 + Math.floor(random() * 3);
  switch (fault) {
    case "slack-429":
      r.fake.setFault("chat.postMessage", { kind: "rate-limited", retryAfterSeconds: 1, times });
      return;
    case "slack-update-5xx":
      r.fake.setFault("chat.update", { kind: "http", status: 503, times });
      return;
    case "kube-429":
      r.world.kube.setFaults({ throttle: { count: times, retryAfterSeconds: 1 } });
      return;
    case "kube-lost-patch":
      r.world.kube.setFaults({ lostResponse: { method: "PATCH", pathPrefix: INGRESS, count: 1 } });
      return;
    case "aws-throttle":
      r.world.aws.setFaults({ throttle: { count: times } });
      return;
    case "worker-replaced": {
      // The second worker stops (its running jobs handed back, as on SIGTERM) and a new one starts.
      const old = r.runtimes.splice(1, 1)[0];
      await old?.stop();
      await r.startWorker();
      return;
    }
    case "redis-restart":
      // Every process sees its connections drop and come back to the same data.
      await r.restartRedis();
      return;
    case "worker-killed": {
      // No hand-back: whatever it holds stays locked until the lock lapses; a new worker starts.
      r.child?.child.kill("SIGKILL");
      await r.child?.exited;
      await r.startWorker();
      return;
    }
  }
}

/** One run of the seed flow with `fault` at `step`; returns what the checks need. */
async function seedFlow(r: Run, fault: Fault, step: Step, random: () => number) {
  const at = async (s: Step) => {
    if (s === step) await inject(r, fault, random);
  };
  await at("start");
  await slash(
    r,
    'finalize ingress/myapp-worker-ingress -n myapp --reason "cause confirmed: SG held by the ELB ENI; recovery first"',
  );
  const removal = await requestCard(r, "myapp-worker-ingress");
  await click(r, APPROVE, removal.id, APPROVER, removal.ts);
  await at("approved");
  await eventually(
    () =>
      r.fake
        .thread(CHANNEL, removal.ts)
        .some((m) => /Waiting for the controller to re-create/.test(m.text ?? ""))
        ? true
        : undefined,
    75_000,
    "the namespace gone and the path re-check waiting",
  );
  await recreateSeed(r.world, ["myapp-worker-ingress"]);
  await at("recreated");
  const offer = await eventually(
    () =>
      r.fake
        .thread(CHANNEL, removal.ts)
        .find((m) => JSON.stringify(m.blocks ?? "").includes(REPAIR_PATH_ACTION)),
    75_000,
    "the card with Fix the path",
  );
  const value = buttonValue(offer.blocks, REPAIR_PATH_ACTION) ?? "";
  const trigger = `1337.${String(Math.floor(random() * 1e6))}.repair`;
  await click(r, REPAIR_PATH_ACTION, value, REQUESTER, offer.ts, trigger);
  await r.fake.waitFor("views.open", (c) => c.body["trigger_id"] === trigger, 15_000);
  const view = await eventually(
    () => {
      const v = r.fake.views().find((x) => x.triggerId === trigger)?.view;
      return v?.["callback_id"] !== undefined ? v : undefined;
    },
    30_000,
    "the repair form",
  );
  await postSigned(
    r.events,
    SECRET,
    viewSubmissionBody({
      callbackId: String(view["callback_id"]),
      privateMetadata: String(view["private_metadata"]),
      values: { reason: { reason: "worker.example.com and test.example.com still name the deleted ALBs" } },
      userId: REQUESTER,
    }),
  );
  const repair = await requestCard(r, "repoint");
  await click(r, APPROVE, repair.id, APPROVER, repair.ts);
  await at("repair-approved");
  const results = [
    /Route 53 change .* is INSYNC/,
    /E2MYAPPTEST0001 is Deployed/,
    /worker\.example\.com answers 200/,
    /test\.example\.com answers 200/,
  ];
  await eventually(
    () =>
      results.every((re) => r.fake.thread(CHANNEL, repair.ts).some((m) => re.test(m.text ?? "")))
        ? true
        : undefined,
    90_000,
    "every wait's result in the repair's thread",
  );
  // Time for anything doubled or stale to show itself.
  await pause(1_500);
  return { removal, repair, results };
}

describe("seeded fault campaign over the seed incident", () => {
  it(`${String(RUNS)} runs, one random fault each: nothing doubled, lost or stale`, async () => {
    console.log(`seed campaign: UNSTUCK_CAMPAIGN_SEED=${String(SEED)} (${String(RUNS)} runs)`);
    const failures: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const runSeed = SEED + i;
      const random = mulberry32(runSeed);
      const drawn = FAULTS[Math.floor(random() * FAULTS.length)] ?? "slack-429";
      const fault = ONLY ?? drawn;
      const step = STEPS[Math.floor(random() * STEPS.length)] ?? "start";
      const label = `run ${String(i)} (seed ${String(runSeed)}): ${fault} at ${step}`;
      console.log(label);
      const r = await startRun(fault);
      try {
        const { removal, repair, results } = await seedFlow(r, fault, step, random);
        const problems: string[] = [];
        const patchesTo = r.world.kube.requests().filter((q) => q.method === "PATCH" && q.path === INGRESS);
        // A PATCH whose answer was lost (the fault) was applied: it is logged with its 500 answer.
        const patched =
          patchesTo.filter((q) => q.status < 400).length +
          (fault === "kube-lost-patch" ? patchesTo.filter((q) => q.status >= 500).length : 0);
        if (patched !== 1) problems.push(`${String(patched)} finalizer PATCHes applied`);
        const applied = (action: string) =>
          r.world.aws.calls().filter((c) => c.action === action && c.status < 400).length;
        if (applied("ChangeResourceRecordSets") !== 1)
          problems.push(`${String(applied("ChangeResourceRecordSets"))} Route 53 changes`);
        if (applied("UpdateDistribution") !== 1)
          problems.push(`${String(applied("UpdateDistribution"))} CloudFront updates`);
        const bot = r.runtimes[0];
        for (const id of [removal.id, repair.id]) {
          const state = (await bot?.runtime.workflow.get(id))?.state;
          if (state !== "DONE") problems.push(`request ${id} ${String(state)}`);
        }
        for (const ts of [removal.ts, repair.ts]) {
          const texts = r.fake.thread(CHANNEL, ts).map((m) => m.text ?? "");
          const twice = texts.filter((t, k) => t !== "" && texts.indexOf(t) !== k);
          if (twice.length > 0) problems.push(`said twice: ${twice.join(" | ").slice(0, 200)}`);
        }
        const removalThread = r.fake.thread(CHANNEL, removal.ts).map((m) => m.text ?? "");
        if (!removalThread.some((t) => /Traffic path of namespace myapp/.test(t)))
          problems.push("no path card after the namespace went");
        // The waits' status messages: all but the vote's reply and the outcome (a 429 may reorder them).
        const statuses = r.fake
          .thread(CHANNEL, repair.ts)
          .filter((m) => !/ approved\.?$|^Repointed/.test(m.text ?? ""));
        for (const re of results) {
          const mine = statuses.filter((m) => re.test(m.text ?? ""));
          if (mine.length !== 1) problems.push(`${String(mine.length)} messages end on ${String(re)}`);
        }
        const stale = statuses.filter((m) => !/^✅/.test(m.text ?? ""));
        if (stale.length > 0)
          problems.push(`status lines not on their result: ${stale.map((m) => m.text).join(" | ")}`);
        if (problems.length > 0) failures.push(`${label}: ${problems.join("; ")}`);
      } catch (err) {
        // What Slack was asked, to see where the flow stopped.
        const calls = r.fake
          .calls()
          .filter((c) => c.method.startsWith("chat.") || c.method === "views.open")
          .map(
            (c) =>
              `${c.method}${c.fault !== undefined ? ` (${c.fault.kind})` : ""} ${(typeof c.body["text"] === "string" ? c.body["text"] : "").slice(0, 60)}`,
          );
        failures.push(
          `${label}: ${err instanceof Error ? err.message : String(err)}\n  ${calls.join("\n  ")}`,
        );
      } finally {
        await r.close();
      }
    }
    expect(failures).toEqual([]);
  }, 1_800_000);
});
