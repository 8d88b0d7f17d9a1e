/**
 * The local Slack console can be driven only by its own page. The real bot (`createRuntime`, the
 * `bot` role, real Redis) behind the console, the kube simulator with the seed incident, and
 * Chromium: a page on another site that the same browser has open sends what browsers send
 * cross-site without asking — a `text/plain;charset=application/json` body, a form post — and gets
 * 403; nothing reaches the bot (no command, no vote, no world event, nothing in Redis or the audit).
 * A request without this page's token, or not exactly `application/json`, is refused as well; the
 * data endpoints refuse cross-site readers and carry no CORS header; the real page still works.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { createKubeAdapter } from "../../src/kube/client-node-adapter.js";
import type { Runtime } from "../../src/runtime.js";
import { botEnv, startRuntime } from "../e2e/bot-env.js";
import { connect, deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../helpers/redis.js";
import { startKubeSim, type KubeSim } from "../sim/kube/index.js";
import { eventually, pause } from "../helpers/eventually.js";
import { CONSOLE_TOKEN_HEADER, startConsole, type SlackConsole } from "../sim/slack/console/server.js";
import { startFakeSlack, type FakeSlack } from "../sim/slack/index.js";
import { launchChromium, screenshot } from "./browser.js";

const TOKEN = "xoxb-console-cross-site";
const SECRET = "console-cross-site-secret";
const CHANNEL = "C0INCIDENT";
const FINALIZE =
  '/unstuck finalize ingress/myapp-worker-ingress -n myapp --reason "forged from another site, never typed"';

let sim: KubeSim;
let fake: FakeSlack;
let runtime: Runtime;
let con: SlackConsole;
let redis: Redis;
let browser: Browser;
let attacker: Server;
let attackerPort = 0;
let worldRuns = 0;
const prefix = uniquePrefix("console-xsite");

/**
 * A page of another site: on load it sends the console what a browser lets any page send without a
 * CORS preflight (the request that used to work), then tries to read the console's data.
 */
const ATTACK_PAGE = `<!doctype html><meta charset="utf-8"><title>cat pictures</title><script>
const consoleUrl = new URL(location.href).searchParams.get("console");
const json = (o) => JSON.stringify(o);
const tricky = { "content-type": "text/plain;charset=application/json" };
async function attack() {
  const sent = [];
  for (const [path, body] of [
    ["api/command", { user: "U0ONCALL1", text: ${JSON.stringify(FINALIZE)} }],
    ["api/action", { user: "U0APPROVER1", ts: "1.1", actionId: "approval:approve", value: "x" }],
    ["api/world", { user: "U0ONCALL1", id: "count" }],
  ]) {
    // Sent either way; the answer (403, same-origin only) never reaches this page.
    await fetch(consoleUrl + path, { method: "POST", mode: "no-cors", headers: tricky, body: json(body) }).catch(
      () => undefined,
    );
    sent.push(path);
  }
  let read = "nothing";
  try {
    read = await (await fetch(consoleUrl + "api/state")).text();
  } catch (err) {
    read = "refused: " + err.name;
  }
  window.__result = { sent, read };
  // A plain form post as well (urlencoded; the browser navigates a hidden frame to the answer).
  const frame = document.createElement("iframe");
  frame.name = "sink";
  document.body.append(frame);
  const form = document.createElement("form");
  form.method = "POST";
  form.action = consoleUrl + "api/command";
  form.target = "sink";
  form.enctype = "text/plain";
  const input = document.createElement("input");
  input.name = '{"user":"U0ONCALL1","text":"/unstuck approvals","x":"';
  input.value = '"}';
  form.append(input);
  document.body.append(form);
  form.submit();
  window.__formSent = true;
}
attack();
</script>`;

interface Snapshot {
  readonly keys: readonly string[];
  readonly audit: number;
  readonly calls: number;
  readonly responses: number;
  readonly worldRuns: number;
}

async function snapshot(): Promise<Snapshot> {
  const keys: string[] = [];
  let cursor = "0";
  do {
    const [next, batch] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== "0");
  return {
    keys: keys.sort(),
    audit: await redis.xlen(`${prefix}:audit`),
    calls: fake.calls().length,
    responses: fake.responses().length,
    worldRuns,
  };
}

/** The token a page served by the console carries (what a client outside a browser reads as well). */
async function pageToken(): Promise<string> {
  const html = await (await fetch(con.url)).text();
  const m = /<meta name="console-token" content="([^"]+)"/.exec(html);
  if (m?.[1] === undefined) throw new Error("the page carries no token");
  return m[1];
}

async function post(
  path: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; text: string; headers: Headers }> {
  const res = await fetch(new URL(path, con.url), { method: "POST", headers, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

beforeAll(async () => {
  sim = await startKubeSim({ scenario: "test/fixtures/scenarios/seed-incident.yaml" });
  fake = await startFakeSlack({ token: TOKEN });
  redis = connect();
  const config = loadConfig(
    botEnv(
      { token: TOKEN, secret: SECRET, slackUrl: fake.url, prefix },
      {
        REDIS_URL,
        // The bot half only: no worker, no sweep, so nothing writes Redis unless a request comes in.
        UNSTUCK_ROLE: "bot",
        UNSTUCK_APPROVERS: "U0APPROVER1",
        UNSTUCK_CHANNELS: CHANNEL,
        UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
      },
    ),
  );
  const bot = await startRuntime(config, { kube: createKubeAdapter(sim.kubeconfig()) });
  runtime = bot.runtime;
  con = await startConsole({
    fake,
    eventsUrl: bot.events,
    signingSecret: SECRET,
    channel: { id: CHANNEL, name: "incident" },
    users: [
      { id: "U0ONCALL1", name: "oncall", role: "requester" },
      { id: "U0APPROVER1", name: "approver-1", role: "approver" },
    ],
    worldActions: [
      {
        id: "count",
        label: "Count",
        run: () => {
          worldRuns += 1;
          return Promise.resolve({ ok: true, lines: [`run ${String(worldRuns)}`] });
        },
      },
    ],
  });
  attacker = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(ATTACK_PAGE);
  });
  attacker.listen(0, "127.0.0.1");
  await once(attacker, "listening");
  attackerPort = (attacker.address() as AddressInfo).port;
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser.close();
  attacker.close();
  await con.stop();
  await runtime.stop();
  await deleteKeysWithPrefix(redis, prefix);
  await redis.quit();
  await fake.stop();
  await sim.stop();
}, 60_000);

describe("the local Slack console refuses other sites", () => {
  // A cross-site page (localhost is another site than 127.0.0.1) and a same-site one on another port.
  it.each([
    ["another site", () => `http://localhost:${String(attackerPort)}/`],
    ["another origin of the same site", () => `http://127.0.0.1:${String(attackerPort)}/`],
  ])(
    "a page of %s: its text/plain;charset=application/json and form posts get 403 and run nothing",
    async (_what, attackerUrl) => {
      const before = await snapshot();
      const page = await browser.newPage();
      // What the console answered, as the network saw it: the page itself never gets to read it.
      const cdp = await page.context().newCDPSession(page);
      await cdp.send("Network.enable");
      // The two events of one request come in either order: joined by request id when read.
      const sent = new Map<string, { url: string; method: string }>();
      const codes = new Map<string, number>();
      cdp.on("Network.requestWillBeSent", (e) => {
        if (e.request.url.startsWith(con.url))
          sent.set(e.requestId, { url: e.request.url, method: e.request.method });
      });
      cdp.on("Network.responseReceivedExtraInfo", (e) => codes.set(e.requestId, e.statusCode));
      const statuses = (): { url: string; method: string; status?: number }[] =>
        [...sent].map(([id, r]) => ({ ...r, ...(codes.has(id) ? { status: codes.get(id) } : {}) }));
      await page.goto(`${attackerUrl()}?console=${encodeURIComponent(con.url)}`);
      const result = await eventually(
        () =>
          page.evaluate(
            () => (globalThis as unknown as { __result?: { sent: string[]; read: string } }).__result,
          ),
        15_000,
        "the attack page finished",
      );
      expect(result.sent).toEqual(["api/command", "api/action", "api/world"]);
      // The console's data cannot be read cross-site.
      expect(result.read).toMatch(/^refused/);
      await eventually(
        () =>
          statuses().filter((s) => s.method === "POST" && s.status !== undefined).length >= 4 &&
          statuses().every((s) => s.status !== undefined)
            ? true
            : undefined,
        15_000,
        "every request answered (the form post too)",
      ).catch((err: unknown) => {
        throw new Error(`${String(err)}; seen: ${JSON.stringify(statuses())}`);
      });
      // Every request the page made was refused with 403 (the form's, too), none answered 200.
      for (const s of statuses()) expect(s, JSON.stringify(s)).toMatchObject({ status: 403 });
      await page.close();
      // Give anything that got through time to reach the bot, Redis and the fake Slack.
      await pause(1_500);
      expect(await snapshot()).toEqual(before);
    },
  );

  it("a request without the page's token, with a wrong one, or from another origin gets 403; only exact application/json is taken", async () => {
    const before = await snapshot();
    const world = { user: "U0ONCALL1", id: "count" };
    const command = { user: "U0ONCALL1", text: FINALIZE };
    const json = { "content-type": "application/json" };
    const token = await pageToken();
    const [nonce] = token.split(".");
    const refused: [string, unknown, Record<string, string>][] = [
      // No token, an empty one, a made-up one, a real nonce with a forged MAC, a truncated real one.
      ["/api/command", command, json],
      ["/api/command", command, { ...json, [CONSOLE_TOKEN_HEADER]: "" }],
      ["/api/world", world, { ...json, [CONSOLE_TOKEN_HEADER]: randomBytes(32).toString("base64url") }],
      ["/api/world", world, { ...json, [CONSOLE_TOKEN_HEADER]: `${nonce ?? ""}.${"A".repeat(43)}` }],
      ["/api/world", world, { ...json, [CONSOLE_TOKEN_HEADER]: token.slice(0, -1) }],
      // The right token from the wrong place.
      ["/api/world", world, { ...json, [CONSOLE_TOKEN_HEADER]: token, origin: "https://evil.example" }],
      ["/api/world", world, { ...json, [CONSOLE_TOKEN_HEADER]: token, origin: "null" }],
      [
        "/api/world",
        world,
        { ...json, [CONSOLE_TOKEN_HEADER]: token, origin: `http://127.0.0.1:${String(attackerPort)}` },
      ],
      ["/api/world", world, { ...json, [CONSOLE_TOKEN_HEADER]: token, "sec-fetch-site": "cross-site" }],
      ["/api/world", world, { ...json, [CONSOLE_TOKEN_HEADER]: token, "sec-fetch-site": "same-site" }],
      // Even the lint check, which changes nothing, is not for other sites.
      ["/api/lint", { blocks: [] }, { ...json, origin: "https://evil.example" }],
    ];
    for (const [path, body, headers] of refused) {
      const res = await post(path, body, headers);
      expect({ path, headers, status: res.status }).toEqual({ path, headers, status: 403 });
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
    }
    // A real token, but not exactly JSON: 415, nothing run.
    for (const type of [
      "text/plain;charset=application/json",
      "text/plain",
      "application/x-www-form-urlencoded",
      "application/jsonp",
      "application/json-patch+json",
      "",
    ]) {
      const res = await post("/api/world", world, { "content-type": type, [CONSOLE_TOKEN_HEADER]: token });
      expect({ type, status: res.status }).toEqual({ type, status: 415 });
    }
    expect(await snapshot()).toEqual(before);

    // The same request with the token, as JSON with parameters, from the console's own origin: it runs.
    const ok = await post("/api/world", world, {
      "content-type": "Application/JSON; charset=utf-8",
      [CONSOLE_TOKEN_HEADER]: token,
      origin: con.url.replace(/\/$/, ""),
      "sec-fetch-site": "same-origin",
    });
    expect(ok.status).toBe(200);
    expect(worldRuns).toBe(before.worldRuns + 1);
    // Every served page has a token of its own, and each one works.
    const other = await pageToken();
    expect(other).not.toBe(token);
    expect((await post("/api/world", world, { ...json, [CONSOLE_TOKEN_HEADER]: other })).status).toBe(200);
    expect(worldRuns).toBe(before.worldRuns + 2);
  });

  it("its data endpoints refuse cross-site readers and never answer with CORS headers", async () => {
    for (const path of ["/api/state", "/api/lint", "/api/stream"]) {
      for (const headers of [
        { origin: "https://evil.example" },
        { "sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors" },
        { "sec-fetch-site": "same-site" },
      ]) {
        const res = await fetch(new URL(path, con.url), { headers });
        expect({ path, headers, status: res.status }).toEqual({ path, headers, status: 403 });
        expect(res.headers.get("access-control-allow-origin")).toBeNull();
        await res.body?.cancel();
      }
      // The page itself (same origin), or an address typed in the browser, reads them.
      for (const headers of [{ "sec-fetch-site": "same-origin" }, { "sec-fetch-site": "none" }, {}]) {
        const controller = new AbortController();
        const res = await fetch(new URL(path, con.url), { headers, signal: controller.signal });
        expect({ path, status: res.status }).toEqual({ path, status: 200 });
        expect(res.headers.get("access-control-allow-origin")).toBeNull();
        expect(res.headers.get("cross-origin-resource-policy")).toBe("same-origin");
        controller.abort();
      }
    }
    // A preflight is never granted.
    const preflight = await fetch(new URL("/api/command", con.url), {
      method: "OPTIONS",
      headers: {
        origin: "https://evil.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": `content-type,${CONSOLE_TOKEN_HEADER}`,
      },
    });
    expect(preflight.status).toBe(404);
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
    expect(preflight.headers.get("access-control-allow-headers")).toBeNull();
  });

  it("the console's own page still drives the bot: a command typed in it is answered", async () => {
    const before = await snapshot();
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    const errors: string[] = [];
    page.on("pageerror", (err) => errors.push(err.message));
    await page.goto(`${con.url}?as=U0ONCALL1`);
    await expect.poll(() => page.locator("#user").inputValue()).toBe("U0ONCALL1");
    await page.fill(
      "#composer-input",
      FINALIZE.replace("forged from another site, never typed", "typed in the console"),
    );
    await page.press("#composer-input", "Enter");
    const request = page.locator(".msg[data-kind=message]", { hasText: "typed in the console" });
    await request.first().waitFor({ timeout: 30_000 });
    await screenshot(page, "cross-site-own-page");
    await page.close();
    expect(errors).toEqual([]);
    const after = await snapshot();
    // The bot ran it: the request is in Redis and in the audit.
    expect(after.audit).toBeGreaterThan(before.audit);
    expect(after.keys.length).toBeGreaterThan(before.keys.length);
  });
});
