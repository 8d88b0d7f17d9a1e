/**
 * The console as a Block Kit linter, and as a page no message can script. A fake Slack and the
 * console run in this process with no bot behind them: messages are posted straight to the fake's
 * Web API (as the bot would post them), then read through `GET /api/lint` and in Chromium.
 */
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { BLOCK_KIT_LIMITS, lintMessage, lintView } from "../sim/slack/block-kit-lint.js";
import { startConsole, type LintReport, type SlackConsole } from "../sim/slack/console/server.js";
import { signRequest, startFakeSlack, type FakeSlack } from "../sim/slack/index.js";
import { launchChromium, screenshot } from "./browser.js";

const TOKEN = "xoxb-console-lint-test";
const CHANNEL = "C0INCIDENT";
let fake: FakeSlack;
let con: SlackConsole;
let browser: Browser;

beforeAll(async () => {
  fake = await startFakeSlack({ token: TOKEN });
  con = await startConsole({
    fake,
    // No bot: nothing here clicks or submits.
    eventsUrl: "http://127.0.0.1:9/slack/events",
    signingSecret: "unused",
    channel: { id: CHANNEL, name: "incident" },
    users: [{ id: "U0ONCALL1", name: "oncall", role: "requester" }],
  });
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser.close();
  await con.stop();
  await fake.stop();
});

/** Post as the bot does (JSON body, bearer token); returns the message ts. */
async function post(body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${fake.url}chat.postMessage`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json; charset=utf-8" },
    body: JSON.stringify({ channel: CHANNEL, ...body }),
  });
  const answer = (await res.json()) as { ok: boolean; ts: string };
  expect(answer.ok).toBe(true);
  return answer.ts;
}

const section = (text: string) => ({ type: "section", text: { type: "mrkdwn", text } });

describe("the Block Kit linter", () => {
  it("flags Slack's limits: blocks per message and modal, section text, button text and value, unknown types", () => {
    const L = BLOCK_KIT_LIMITS;
    expect(L.messageBlocks).toBe(50);
    expect(L.modalBlocks).toBe(100);
    expect(L.sectionText).toBe(3_000);
    expect(L.buttonValue).toBe(2_000);
    expect(L.buttonText).toBe(75);

    const ok = lintMessage({
      text: "fallback",
      blocks: [
        { type: "header", text: { type: "plain_text", text: "Namespace myapp: BLOCKED" } },
        section("x".repeat(3_000)),
        {
          type: "actions",
          elements: [
            {
              type: "button",
              action_id: "a",
              text: { type: "plain_text", text: "y".repeat(75) },
              value: "v".repeat(2_000),
            },
          ],
        },
      ],
    });
    expect(ok).toEqual([]);

    const bad = lintMessage({
      text: "fallback",
      blocks: [
        ...Array.from({ length: 49 }, (_, i) => section(`block ${String(i)}`)),
        section("x".repeat(3_001)),
        { type: "carousel", items: [] },
        {
          type: "actions",
          elements: [
            {
              type: "button",
              action_id: "a",
              text: { type: "plain_text", text: "y".repeat(76) },
              value: "v".repeat(2_001),
              style: "loud",
              confirm: {
                title: { type: "plain_text", text: "t" },
                text: { type: "mrkdwn", text: "z".repeat(301) },
              },
            },
            { type: "datepicker", action_id: "b" },
          ],
        },
      ],
    });
    const messages = bad.map((p) => `${p.path}: ${p.message}`);
    expect(messages).toEqual(
      expect.arrayContaining([
        "blocks: 52 blocks; a message holds at most 50",
        "blocks[49].text.text: section text is 3001 characters; the limit is 3000",
        'blocks[50].type: unknown block type "carousel": the console cannot render it',
        "blocks[51].elements[0].text.text: button text is 76 characters; the limit is 75",
        "blocks[51].elements[0].value: value is 2001 characters; the limit is 2000",
        'blocks[51].elements[0].style: style must be primary or danger, not "loud"',
        "blocks[51].elements[0].confirm.text.text: the confirm text is 301 characters; the limit is 300",
        "blocks[51].elements[0].confirm.confirm: the confirm button must be a text object",
        'blocks[51].elements[1].type: unknown element type "datepicker": the console cannot render it',
      ]),
    );
    expect(bad.every((p) => p.severity === "error")).toBe(true);

    // Modals: 100 blocks, a title of at most 24 characters, inputs need a submit button.
    const modal = lintView({
      type: "modal",
      title: { type: "plain_text", text: "A title far too long for a modal" },
      blocks: Array.from({ length: 101 }, (_, i) => ({
        type: "input",
        block_id: `b${String(i % 100)}`,
        label: { type: "plain_text", text: "Why" },
        element: { type: "plain_text_input", action_id: "reason" },
      })),
    }).map((p) => `${p.path}: ${p.message}`);
    expect(modal).toEqual(
      expect.arrayContaining([
        "view.title.text: the title is 32 characters; the limit is 24",
        "view.blocks: 101 blocks; a modal holds at most 100",
        'view.blocks[100].block_id: block_id "b0" is used twice',
        "view.submit: a modal with input blocks needs a submit button",
      ]),
    );
    // A message without fallback text: accepted by Slack, but a phone notification says nothing.
    expect(lintMessage({ blocks: [section("hi")] })).toEqual([
      expect.objectContaining({ path: "text", severity: "warning" }),
    ]);
  });

  it("shows an over-limit message and an unknown block type as errors in the console and at /api/lint", async () => {
    const overTs = await post({
      text: "too many blocks",
      blocks: Array.from({ length: 51 }, (_, i) => section(`line ${String(i)}`)),
    });
    const unknownTs = await post({
      text: "a block the console cannot draw",
      blocks: [section("before"), { type: "carousel", elements: [] }, section("after")],
    });
    const report = (await (await fetch(new URL("/api/lint", con.url))).json()) as LintReport;
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ where: `message ${overTs}`, path: "blocks", severity: "error" }),
        expect.objectContaining({
          where: `message ${unknownTs}`,
          path: "blocks[1].type",
          message: 'unknown block type "carousel": the console cannot render it',
        }),
      ]),
    );
    // The same check for anything sent to it.
    const adhoc = (await (
      await fetch(new URL("/api/lint", con.url), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ blocks: [{ type: "video" }] }),
      })
    ).json()) as { problems: { message: string }[] };
    expect(adhoc.problems.map((p) => p.message)).toEqual([
      'unknown block type "video": the console cannot render it',
    ]);

    const page = await browser.newPage();
    await page.goto(con.url);
    const over = page.locator(`.msg[data-ts="${overTs}"]`);
    await over.waitFor();
    expect(await over.locator(".bk-lint").innerText()).toMatch(/51 blocks; a message holds at most 50/);
    const unknown = page.locator(`.msg[data-ts="${unknownTs}"]`);
    expect(await unknown.locator(".bk-unrenderable").innerText()).toMatch(
      /cannot render block type "carousel"/,
    );
    // The blocks around it still render.
    expect(await unknown.locator(".bk-section").allInnerTexts()).toEqual(["before", "after"]);
    expect(await page.locator("#lint").innerText()).toMatch(/errors/);
    await screenshot(page, "lint-errors");
    await page.close();
  });
});

describe("rendering is never HTML", () => {
  it("shows <script> and <img onerror> from a message as text, runs nothing, keeps links to http(s)", async () => {
    const hostile = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';
    // As a bot that escapes its mrkdwn (&lt; &gt; &amp;) would send it, and as one that forgot to.
    const escaped = hostile.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
    const ts = await post({
      text: hostile,
      blocks: [
        { type: "header", text: { type: "plain_text", text: hostile.slice(0, 150) } },
        section(`escaped: ${escaped}`),
        section(
          `raw: ${hostile} *bold* <javascript:alert(1)|click me> <https://example.com/a?b=1&amp;c=2|a link>`,
        ),
        {
          type: "section",
          fields: [
            { type: "mrkdwn", text: `\`${escaped}\`` },
            { type: "plain_text", text: hostile },
          ],
        },
        { type: "context", elements: [{ type: "mrkdwn", text: `\`\`\`${escaped}\`\`\`` }] },
        {
          type: "actions",
          elements: [
            {
              type: "button",
              action_id: "x",
              text: { type: "plain_text", text: "<b>no</b>" },
              value: hostile,
            },
          ],
        },
      ],
    });
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(con.url);
    const msg = page.locator(`.msg[data-ts="${ts}"]`);
    await msg.waitFor();
    expect(
      await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned),
    ).toBeUndefined();
    // No element from the message: no script, no img, no element with an inline handler.
    expect(await msg.locator("script, img, [onerror], iframe, object").count()).toBe(0);
    const text = await msg.innerText();
    expect(text).toContain("<script>window.__pwned = 1</script>");
    expect(text).toContain(
      'escaped: <script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">',
    );
    expect(await msg.locator(".bk-section b").first().innerText()).toBe("bold");
    expect(await msg.locator(".bk-button").innerText()).toBe("<b>no</b>");
    // javascript: never becomes a link; https does, with the entity decoded.
    const hrefs = await msg.locator("a").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
    expect(hrefs).toEqual(["https://example.com/a?b=1&c=2"]);
    expect(text).toContain("click me");
    expect(errors).toEqual([]);
    await screenshot(page, "escaping");
    await page.close();
  });
});

describe("modals", () => {
  it("sends checkboxes, a select and text as Slack's typed state values, signed, and shows the errors the app answers inline", async () => {
    // A stand-in app behind its own console: verifies the signature, answers the first submission with errors.
    const secret = "modal-test-secret";
    const received: Record<string, unknown>[] = [];
    const app = createServer((req, res) => {
      let raw = "";
      req.on("data", (d: Buffer) => (raw += d.toString()));
      req.on("end", () => {
        const ts = Number(req.headers["x-slack-request-timestamp"]);
        const good = signRequest(secret, raw, ts)["x-slack-signature"] === req.headers["x-slack-signature"];
        const payload = JSON.parse(new URLSearchParams(raw).get("payload") ?? "{}") as Record<
          string,
          unknown
        >;
        received.push({ good, payload });
        const body =
          received.length === 1
            ? { response_action: "errors", errors: { region: "Pick a region this cluster runs in." } }
            : {};
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
      });
    });
    app.listen(0, "127.0.0.1");
    await once(app, "listening");
    const appPort = (app.address() as AddressInfo).port;
    const fake2 = await startFakeSlack({ token: TOKEN });
    const con2 = await startConsole({
      fake: fake2,
      eventsUrl: `http://127.0.0.1:${String(appPort)}/slack/events`,
      signingSecret: secret,
      channel: { id: CHANNEL, name: "incident" },
      users: [{ id: "U0ONCALL1", name: "oncall", role: "requester" }],
    });
    try {
      const option = (value: string, text: string) => ({ value, text: { type: "plain_text", text } });
      const opened = await fetch(`${fake2.url}views.open`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json; charset=utf-8" },
        body: JSON.stringify({
          trigger_id: "1.2.3",
          view: {
            type: "modal",
            callback_id: "checklist",
            private_metadata: '{"request":"r1"}',
            title: { type: "plain_text", text: "Confirm" },
            submit: { type: "plain_text", text: "Send" },
            blocks: [
              {
                type: "input",
                block_id: "conditions",
                label: { type: "plain_text", text: "I confirm" },
                element: {
                  type: "checkboxes",
                  action_id: "checked",
                  options: [
                    option("cause", "Cause confirmed"),
                    option("recovery", "Recovery first"),
                    option("plan", "Clean-up plan"),
                  ],
                },
              },
              {
                type: "input",
                block_id: "region",
                label: { type: "plain_text", text: "Region" },
                element: {
                  type: "static_select",
                  action_id: "pick",
                  options: [option("eu-west-1", "eu-west-1"), option("ap-northeast-2", "ap-northeast-2")],
                },
              },
              {
                type: "input",
                block_id: "note",
                optional: true,
                label: { type: "plain_text", text: "Note" },
                element: { type: "plain_text_input", action_id: "text" },
              },
            ],
          },
        }),
      });
      expect(((await opened.json()) as { ok: boolean }).ok).toBe(true);
      const page = await browser.newPage();
      await page.goto(con2.url);
      const modal = page.locator(".overlay.modal .dialog");
      await modal.waitFor();
      // Slack itself refuses an empty required input before anything is sent.
      await modal.locator('button[data-modal="submit"]').click();
      await modal.locator('.bk-input[data-block-id="conditions"] .input-error').waitFor();
      expect(received).toEqual([]);
      await modal.locator('input[type=checkbox][value="cause"]').check();
      await modal.locator('input[type=checkbox][value="plan"]').check();
      await modal.locator('.bk-input[data-block-id="region"] select').selectOption("eu-west-1");
      await modal.locator('button[data-modal="submit"]').click();
      const error = modal.locator('.bk-input[data-block-id="region"] .input-error');
      await error.waitFor();
      expect(await error.innerText()).toBe("Pick a region this cluster runs in.");
      expect(await modal.locator('input[type=checkbox][value="plan"]').isChecked()).toBe(true);
      await modal.locator('.bk-input[data-block-id="region"] select').selectOption("ap-northeast-2");
      await modal.locator('button[data-modal="submit"]').click();
      await modal.waitFor({ state: "detached" });
      expect(received).toHaveLength(2);
      const last = received[1] as {
        good: boolean;
        payload: { type: string; user: { id: string }; view: Record<string, unknown> };
      };
      expect(last.good).toBe(true);
      expect(last.payload.type).toBe("view_submission");
      expect(last.payload.user.id).toBe("U0ONCALL1");
      expect(last.payload.view["callback_id"]).toBe("checklist");
      expect(last.payload.view["private_metadata"]).toBe('{"request":"r1"}');
      expect(last.payload.view["state"]).toEqual({
        values: {
          conditions: {
            checked: {
              type: "checkboxes",
              selected_options: [option("cause", "Cause confirmed"), option("plan", "Clean-up plan")],
            },
          },
          region: {
            pick: { type: "static_select", selected_option: option("ap-northeast-2", "ap-northeast-2") },
          },
          note: { text: { type: "plain_text_input", value: null } },
        },
      });
      await page.close();
    } finally {
      await con2.stop();
      await fake2.stop();
      app.close();
    }
  });
});
