/**
 * The simulated world after (or during) the seed incident with the whole bot on top: the runtime's own
 * wiring over signed HTTP, real Redis and BullMQ, the fake Slack, the world's AWS, DNS server and HTTP
 * front. Shared by the tests that walk the traffic half of the incident as a person does.
 */
import { request } from "node:http";
import type { Redis } from "ioredis";
import { afterEach, expect } from "vitest";
import type { Runtime } from "../../src/runtime.js";
import { eventually } from "../helpers/eventually.js";
import { clickButton } from "../helpers/slack-click.js";
import { FAST_LBC } from "../integration/helpers/aws-world.js";
import { REPAIR_PATH_ACTION } from "../../src/slack/blocks/trace.js";
import { postSigned, slashCommandBody, viewSubmissionBody, type FakeSlack } from "../sim/slack/index.js";
import { buttonValue } from "./block-kit.js";
import type { World } from "../sim/world.js";
import { startTestWorld } from "../helpers/world.js";

export const SECRET = "repoint-signing-secret";
const TOKEN = "xoxb-repoint-runtime-token";
export const CHANNEL = "C0INCIDENT";
export const REQUESTER = "U0ONCALL1";
export const APPROVER = "U0APPROVER1";
export const APPROVE = "approval:approve";
export const DETAILS = "approval:details";

export interface Setup {
  readonly world: World;
  readonly fake: FakeSlack;
  readonly runtime: Runtime;
  readonly redis: Redis;
  readonly prefix: string;
  readonly events: string;
  readonly close: () => Promise<void>;
}

const running: Setup[] = [];
afterEach(async () => {
  while (running.length > 0) await running.pop()?.close();
});

export async function setup(
  scenario = "seed-recovered.yaml",
  env: Readonly<Record<string, string>> = {},
): Promise<Setup> {
  const w = await startTestWorld({
    token: TOKEN,
    secret: SECRET,
    label: "repoint",
    sim: {
      scenario: `test/fixtures/scenarios/${scenario}`,
      lbc: FAST_LBC,
      controllerIntervalMs: 50,
      cloudFrontDeployMs: 1_500,
      route53SyncMs: 500,
    },
    env: {
      UNSTUCK_APPROVERS: APPROVER,
      UNSTUCK_CHANNELS: CHANNEL,
      UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
      UNSTUCK_HEALTH_PATHS: "/,/readyz",
      ...env,
    },
    runtime: { edgeWaits: { intervalMs: 200, maxIntervalMs: 400 }, pathRecheck: { intervalMs: 300 } },
  });
  const world = w.sim;
  if (world === undefined) throw new Error("the world has its simulators");
  const s: Setup = {
    world,
    fake: w.fake,
    runtime: w.runtime,
    redis: w.redis,
    prefix: w.prefix,
    events: w.events,
    close: () => w.stop(),
  };
  running.push(s);
  return s;
}

export async function slash(s: Setup, text: string, user = REQUESTER, id = "cmd"): Promise<void> {
  const res = await postSigned(
    s.events,
    SECRET,
    slashCommandBody({ text, userId: user, channelId: CHANNEL, responseUrl: s.fake.responseUrl(id) }),
  );
  expect(res.status).toBe(200);
}

export function click(s: Setup, actionId: string, value: string, user: string, ts: string, trigger?: string) {
  return clickButton(
    { events: s.events, fake: s.fake, secret: SECRET, channel: CHANNEL },
    actionId,
    value,
    user,
    ts,
    trigger,
  );
}

/**
 * The form a *Fix the path* click opened, once it asks for a reason: it opens saying it is tracing,
 * then becomes the form (or an answer).
 */
export async function formOf(s: Setup, trigger: string): Promise<Record<string, unknown>> {
  await s.fake.waitFor("views.open", (c) => c.body["trigger_id"] === trigger, 10_000);
  return eventually(
    () => {
      const view = s.fake.views().find((v) => v.triggerId === trigger)?.view;
      return view?.["callback_id"] !== undefined ? view : undefined;
    },
    20_000,
    "the repair form",
  );
}

/** What the HTTP front answers for a host now (as a client through CloudFront would see it). */
export function front(s: Setup, host: string, path = "/"): Promise<number> {
  // node:http, not fetch: fetch drops a Host header it is given.
  return new Promise((resolve, reject) => {
    const req = request(`${s.world.httpFront.url}${path}`, { headers: { host } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

/** What *Details* answers `user` about request `id` (its message `ts`), privately: its blocks as JSON. */
export async function detailsOf(s: Setup, id: string, ts: string, user = APPROVER): Promise<string> {
  await click(s, DETAILS, id, user, ts);
  const answer = await s.fake.waitForResponse((r) => r.id === `click-${DETAILS}-${user}`, 10_000);
  expect(answer.body["response_type"]).toBe("ephemeral");
  return JSON.stringify(answer.body["blocks"]);
}

/**
 * *Fix the path* clicked on the card `cardTs` (its button `value`) by `user`, the form answered with
 * `reason`: the repair request it posted, once attached to its message.
 */
export async function askRepair(
  s: Setup,
  card: { readonly ts: string; readonly value: string },
  reason: string,
  trigger: string,
  user = REQUESTER,
): Promise<{ readonly id: string; readonly ts: string; readonly blocks: unknown }> {
  // The calls made so far (the fake keeps each call's object): the request is a call after them.
  const before = new Set(s.fake.calls());
  await click(s, REPAIR_PATH_ACTION, card.value, user, card.ts, trigger);
  const view = await formOf(s, trigger);
  await postSigned(
    s.events,
    SECRET,
    viewSubmissionBody({
      callbackId: String(view["callback_id"]),
      privateMetadata: String(view["private_metadata"]),
      values: { reason: { reason } },
      userId: user,
    }),
  );
  const post = await s.fake.waitFor(
    "chat.postMessage",
    (c) => JSON.stringify(c.body["blocks"] ?? "").includes(APPROVE) && !before.has(c),
    30_000,
  );
  const blocks = post.body["blocks"];
  const id = buttonValue(blocks, APPROVE) ?? "";
  await eventually(
    async () => ((await s.runtime.workflow.get(id)).message ? true : undefined),
    10_000,
    "attached",
  );
  return { id, ts: String(post.response?.["ts"]), blocks };
}

/**
 * The seed incident's forced removal as the on-call engineer asks it: `finalize` of the worker
 * Ingress with a reason; the request it posted, once attached to its message.
 */
export async function askSeedRemoval(s: Setup): Promise<{ readonly id: string; readonly ts: string }> {
  await slash(
    s,
    'finalize ingress/myapp-worker-ingress -n myapp --reason "cause confirmed: SG held by the ELB ENI; recovery first"',
  );
  const post = await s.fake.waitFor(
    "chat.postMessage",
    (c) => JSON.stringify(c.body["blocks"] ?? "").includes(APPROVE),
    20_000,
  );
  const id = buttonValue(post.body["blocks"], APPROVE) ?? "";
  await eventually(
    async () => ((await s.runtime.workflow.get(id)).message ? true : undefined),
    10_000,
    "attached",
  );
  return { id, ts: String(post.response?.["ts"]) };
}
