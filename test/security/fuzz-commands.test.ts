/**
 * Fuzz through the signed HTTP path: thousands of generated command texts (fixed seed, so CI replays
 * the same ones) sent as signed slash commands to the bot as `createRuntime` wires it — Bolt over HTTP,
 * real Redis and BullMQ, the Kubernetes simulator with the seed incident, the fake Slack Web API with an
 * audit channel. Asserts that every command is acknowledged and answered (nothing crashes or hangs),
 * that no request with an invalid name reaches the Kubernetes API, and that nothing posted to Slack —
 * channel messages, ephemeral replies, thread replies, the audit mirror — carries live markup the bot
 * did not write itself.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { createKubeAdapter } from "../../src/kube/client-node-adapter.js";
import type { Runtime } from "../../src/runtime.js";
import type { SlackMessage } from "../../src/slack/blocks/index.js";
import { SlackLimit } from "../../src/slack/blocks/text.js";
import { deletePrefix, uniquePrefix } from "../helpers/redis.js";
import { startKubeSim, type KubeSim } from "../sim/kube/index.js";
import { postSigned, slashCommandBody, startFakeSlack, type FakeSlack } from "../sim/slack/index.js";
import { allowedFor, assertSafeMessage, assertSafeText, hostile, mulberry32 } from "./hostile.js";
import { botEnv, startRuntime } from "../e2e/bot-env.js";
import { keyEnv } from "../helpers/keys.js";
import { eventuallyTrue } from "../helpers/eventually.js";

const SEED = 20_260_212;
const COUNT = 2_000;
const CONCURRENCY = 8;
const SECRET = "fuzz-signing-secret";
const TOKEN = "xoxb-fuzz-runtime-token";
const CHANNEL = "C0INCIDENT";
const AUDIT_CHANNEL = "C0AUDIT";
const USER = "U0FUZZER1";
const APPROVER = "U0APPROVER1";

/** Names the cluster knows or could know; the rest of the time the fuzzer sends hostile text. */
const REAL_NAMES = ["myapp", "myapp-worker-ingress", "kube-system", "missing-ns", "default"];

function name(r: () => number): string {
  const roll = r();
  if (roll < 0.08) return REAL_NAMES[Math.floor(r() * REAL_NAMES.length)] ?? "myapp";
  if (roll < 0.15) {
    // Almost valid: the mistakes a validator must catch (case, length, dots, trailing dash).
    const variants = [
      "MyApp",
      "myapp-",
      "-myapp",
      "my_app",
      "a".repeat(64),
      "my..app",
      "myapp/../x",
      "%2e%2e",
    ];
    return variants[Math.floor(r() * variants.length)] ?? "MyApp";
  }
  return hostile(r, 4);
}

function quoted(s: string): string {
  return `"${s.replace(/"/g, "'")}"`;
}

/** One generated command text. */
function commandText(r: () => number): string {
  const kinds = ["ingress", "service", "ingresses.networking.k8s.io", "pod", hostile(r, 1)];
  const kind = kinds[Math.floor(r() * kinds.length)] ?? "ingress";
  switch (Math.floor(r() * 9)) {
    case 0:
      return `ns ${name(r)}`;
    case 1:
      return `diagnose namespace ${name(r)}${r() < 0.2 ? " --json" : ""}`;
    case 2:
      return `watch ns ${name(r)}`;
    case 3:
      return `finalize ${kind}/${name(r)} -n ${name(r)}${r() < 0.3 ? ` --finalizer ${hostile(r, 2)}` : ""} --reason ${quoted(hostile(r))}`;
    case 4:
      return `finalize ${kind}/${name(r)} -n ${name(r)} --reason ${quoted(`<!channel> ${hostile(r)} recovery first`)}`;
    case 5:
      return `approvals --limit ${hostile(r, 1)}`;
    case 6:
      return `audit ${r() < 0.5 ? String(Math.floor(r() * 50)) : hostile(r, 1)}`;
    case 7:
      return `help ${hostile(r, 2)}`;
    default:
      return hostile(r);
  }
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
/** A segment of any path the bot has reason to call: group names, versions, plural resources, names. */
const SEGMENT = /^[A-Za-z0-9.-]{1,253}$/;

/** Why a Kubernetes API path carries an invalid name, or `undefined` when it is clean. */
function invalidName(path: string): string | undefined {
  const segments = path.split("/").filter((s) => s.length > 0);
  for (const raw of segments) {
    let s: string;
    try {
      s = decodeURIComponent(raw);
    } catch {
      return `undecodable segment ${raw}`;
    }
    if (!SEGMENT.test(s)) return `segment ${JSON.stringify(s.slice(0, 80))}`;
  }
  const ns = segments.indexOf("namespaces");
  const namespace = ns >= 0 ? segments[ns + 1] : undefined;
  if (namespace !== undefined && (namespace.length > 63 || !DNS_LABEL.test(namespace))) {
    return `namespace ${JSON.stringify(namespace.slice(0, 80))}`;
  }
  // …/namespaces/<ns>/<resource>/<name>: object names are DNS subdomains (every type the bot touches).
  const objectName = ns >= 0 ? segments[ns + 3] : undefined;
  if (objectName !== undefined && (objectName.length > 253 || !DNS_SUBDOMAIN.test(objectName))) {
    return `name ${JSON.stringify(objectName.slice(0, 80))}`;
  }
  return undefined;
}

/** Run `task` over `items` with at most `limit` in flight. */
async function pool<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T;
      await task(item);
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
}

describe(`fuzzed slash commands over signed HTTP (seed ${String(SEED)}, ${String(COUNT)} texts)`, () => {
  let sim: KubeSim;
  let fake: FakeSlack;
  let runtime: Runtime;
  let events: string;
  const prefix = uniquePrefix("fuzz");

  beforeAll(async () => {
    sim = await startKubeSim({
      scenario: "test/fixtures/scenarios/seed-incident.yaml",
      controllerIntervalMs: 1_000,
    });
    fake = await startFakeSlack({ token: TOKEN });
    const config = loadConfig(
      botEnv(
        { token: TOKEN, secret: SECRET, slackUrl: fake.url, prefix },
        {
          UNSTUCK_APPROVERS: APPROVER,
          UNSTUCK_CHANNELS: CHANNEL,
          UNSTUCK_AUDIT_CHANNEL: AUDIT_CHANNEL,
          ...keyEnv(),
          UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
          UNSTUCK_WAIT_INTERVAL_SECONDS: "600",
        },
      ),
    );
    ({ runtime, events } = await startRuntime(config, { kube: createKubeAdapter(sim.kubeconfig()) }));
  }, 30_000);

  afterAll(async () => {
    await runtime.stop();
    await deletePrefix(prefix);
    await fake.stop();
    await sim.stop();
  });

  it("acks and answers every command, sends no invalid name to the API and posts no live markup", async () => {
    const r = mulberry32(SEED);
    // Every 50th is a request on the real blocked object with a hostile reason, so approval requests
    // and their audit-channel mirror lines are posted too.
    const texts = Array.from({ length: COUNT }, (_, i) =>
      i % 50 === 7
        ? `finalize ingress/myapp-worker-ingress -n myapp --reason ${quoted(`<!channel> <@U0ADMIN> ${hostile(r)} recovery first`)}`
        : commandText(r),
    );
    const started = Date.now();
    const statuses = new Map<number, number>();
    const ids: string[] = [];
    await pool(
      texts.map((text, i) => ({ text, i })),
      CONCURRENCY,
      async ({ text, i }) => {
        const id = `fuzz-${String(i)}`;
        ids.push(id);
        const res = await postSigned(
          events,
          SECRET,
          slashCommandBody({ text, userId: USER, channelId: CHANNEL, responseUrl: fake.responseUrl(id) }),
        );
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      },
    );
    // Every command acked (Bolt answers 200 once the listener has acked).
    expect(Object.fromEntries(statuses)).toEqual({ 200: COUNT });

    // Every command answered: privately through its response_url, or in the channel.
    const ours = new Set(ids);
    const answered = (): number =>
      new Set(
        fake
          .responses()
          .filter((p) => ours.has(p.id))
          .map((p) => p.id),
      ).size +
      fake
        .calls()
        .filter(
          (c) =>
            c.method === "chat.postMessage" &&
            c.body["channel"] === CHANNEL &&
            c.body["thread_ts"] === undefined,
        ).length;
    await eventuallyTrue(() => answered() >= COUNT, 60_000, `answers to ${String(COUNT)} commands`);

    // The app still answers after the storm.
    const after = await postSigned(
      events,
      SECRET,
      slashCommandBody({
        text: "help",
        userId: USER,
        channelId: CHANNEL,
        responseUrl: fake.responseUrl("after"),
      }),
    );
    expect(after.status).toBe(200);
    await fake.waitForResponse((p) => p.id === "after", 10_000);

    // No Kubernetes request carried an invalid name.
    const bad = sim
      .requests()
      .map((q) => ({ q, why: invalidName(q.path) }))
      .filter((x) => x.why !== undefined);
    expect(
      bad.slice(0, 5).map((x) => `${x.q.method} ${x.q.path.slice(0, 120)}: ${x.why ?? ""}`),
      "API requests with invalid names",
    ).toEqual([]);

    // Nothing posted anywhere carries markup the bot did not write: its own mentions are of the
    // requester and the approver, its own channel links name the incident channel.
    const allowed = allowedFor([USER, APPROVER], [CHANNEL]);
    let checked = 0;
    for (const c of fake.calls()) {
      if (!["chat.postMessage", "chat.update", "chat.postEphemeral"].includes(c.method)) continue;
      const text = typeof c.body["text"] === "string" ? c.body["text"] : "";
      const blocks = Array.isArray(c.body["blocks"]) ? (c.body["blocks"] as SlackMessage["blocks"]) : [];
      assertSafeMessage({ text, blocks }, allowed, `${c.method} to ${String(c.body["channel"])}`);
      checked += 1;
    }
    for (const p of fake.responses()) {
      const text = typeof p.body["text"] === "string" ? p.body["text"] : "";
      const blocks = Array.isArray(p.body["blocks"]) ? (p.body["blocks"] as SlackMessage["blocks"]) : [];
      assertSafeMessage({ text, blocks }, allowed, `response ${p.id}`);
      checked += 1;
    }
    const mirrored = fake
      .calls()
      .filter((c) => c.method === "chat.postMessage" && c.body["channel"] === AUDIT_CHANNEL);
    for (const m of mirrored)
      assertSafeText(String(m.body["text"]), SlackLimit.Section, allowed, "audit mirror");
    console.info(
      `fuzz: ${String(COUNT)} commands in ${String(Date.now() - started)} ms; ${String(checked)} posts checked, ` +
        `${String(mirrored.length)} audit mirror lines, ${String(sim.requests().length)} kube requests`,
    );
  }, 120_000);
});
