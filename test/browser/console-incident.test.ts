/**
 * The seed incident solved from the browser, as a new on-call engineer would: `npm start` without
 * Slack credentials (the sandbox, in a child process), its console in Debian's Chromium. Slash
 * command → diagnosis card → "Request finalizer removal" → the modal (a bad finalizer refused
 * inline, then sent) → the approval request → the requester's own approval refused, visible to
 * them only → a second person approves → the card repainted in place, the namespace gone in the
 * thread. Screenshots of each step are kept in test-artifacts/browser/.
 */
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { launchChromium, screenshot, startSandboxProcess, type SandboxProcess } from "./browser.js";

let sandbox: SandboxProcess | undefined;
let browser: Browser | undefined;

beforeAll(async () => {
  sandbox = await startSandboxProcess();
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  const code = await sandbox?.stop();
  expect(code).toBe(0);
}, 60_000);

async function slash(page: Page, text: string): Promise<void> {
  await page.fill("#composer-input", text);
  await page.press("#composer-input", "Enter");
}

async function actAs(page: Page, user: string): Promise<void> {
  await page.selectOption("#user", user);
}

describe("the local Slack console", () => {
  it("solves the seed incident from the browser: diagnose, request through the modal, self-approval refused, approved by another, namespace gone", async () => {
    const page = await browser!.newPage({ viewport: { width: 1200, height: 900 } });
    const scripts: string[] = [];
    page.on("pageerror", (err) => scripts.push(err.message));
    await page.goto(`${sandbox!.consoleUrl}?as=U0ONCALL1`);
    await expect.poll(() => page.locator("#user").inputValue()).toBe("U0ONCALL1");

    // 1. The diagnosis, rendered as Block Kit: header, mrkdwn sections, context, actions.
    await slash(page, "/unstuck ns myapp");
    const card = page.locator(".msg[data-kind=message]", {
      has: page.locator(".bk-header", { hasText: "myapp" }),
    });
    await card.first().waitFor({ timeout: 30_000 });
    await expect.poll(() => card.first().locator(".bk-header").innerText()).toMatch(/BLOCKED/);
    expect(await card.first().locator(".bk-section code").count()).toBeGreaterThan(0);
    expect(await card.first().locator(".bk-context").count()).toBeGreaterThan(0);
    await screenshot(page, "01-diagnosis");

    // 2. The form: a finalizer name the bot refuses comes back inline, under its input.
    await card.first().locator('button[data-action-id="finalize:request"]').click();
    const modal = page.locator(".overlay.modal .dialog");
    await modal.waitFor({ timeout: 15_000 });
    await modal
      .locator('.bk-input[data-block-id="reason"] textarea')
      .fill("Cause confirmed: an ENI of the deleted ALB holds the shared SG; recovery first.");
    // The three statements are required checkboxes: unticked, the form is not sent.
    await modal.locator('button[data-modal="submit"]').click();
    const unticked = modal.locator('.bk-input[data-block-id="cause-confirmed"] .input-error');
    await unticked.waitFor({ timeout: 15_000 });
    expect(await unticked.innerText()).toMatch(/required/);
    for (const id of ["cause-confirmed", "recovery-first", "cleanup-plan"]) {
      await modal.locator(`.bk-input[data-block-id="${id}"] input[type=checkbox]`).check();
    }
    await modal.locator('.bk-input[data-block-id="finalizer"] input').fill("not a finalizer!");
    await modal.locator('button[data-modal="submit"]').click();
    const inlineError = modal.locator('.bk-input[data-block-id="finalizer"] .input-error');
    await inlineError.waitFor({ timeout: 15_000 });
    expect(await inlineError.innerText()).toMatch(/not a finalizer name/);
    // What was typed survives the repaint with the error.
    expect(await modal.locator('.bk-input[data-block-id="reason"] textarea').inputValue()).toMatch(/ENI/);
    await screenshot(page, "02-modal-error");
    await modal.locator('.bk-input[data-block-id="finalizer"] input').fill("");
    await modal.locator('button[data-modal="submit"]').click();
    await modal.waitFor({ state: "detached", timeout: 15_000 });

    // 3. The approval request; the requester's own Approve goes through the confirm dialog, is refused.
    const request = page.locator(".msg[data-kind=message]", {
      has: page.locator('button[data-action-id="approval:approve"]'),
    });
    await request.first().waitFor({ timeout: 30_000 });
    const requestTs = await request.first().getAttribute("data-ts");
    expect(requestTs).toBeTruthy();
    // The card is what an approver decides on: a few lines above the buttons.
    expect(await request.first().innerText()).toMatch(
      /Changes:[\s\S]*Why:[\s\S]*Leaves behind:[\s\S]*Asked by/,
    );
    // Details answers the rest to the one who clicks: what the requester confirmed, in their name.
    await request.first().locator('button[data-action-id="approval:details"]').click();
    const details = page.locator(".msg.ephemeral", { hasText: /confirms:/ });
    await details.first().waitFor({ timeout: 15_000 });
    expect(await details.first().innerText()).toMatch(/confirms:[\s\S]*recovery cannot wait/);
    await screenshot(page, "03-request-details");
    await request.first().locator('button[data-action-id="approval:approve"]').click();
    const confirm = page.locator(".overlay.confirm .dialog");
    await confirm.waitFor();
    expect(await confirm.innerText()).toMatch(/Approve/);
    await confirm.locator('button[data-confirm="yes"]').click();
    const refusal = page.locator(".msg.ephemeral", { hasText: /someone else/i });
    await refusal.first().waitFor({ timeout: 15_000 });
    expect(await refusal.first().locator(".only-you").innerText()).toBe("Only visible to you");
    await screenshot(page, "03-self-approval-refused");

    // 4. Another user: the refusal is not theirs to see; their approval executes the request.
    await actAs(page, "U0APPROVER1");
    await expect.poll(() => page.locator(".msg.ephemeral", { hasText: /someone else/i }).count()).toBe(0);
    const same = page.locator(`.msg[data-ts="${requestTs ?? ""}"]`);
    await same.locator('button[data-action-id="approval:approve"]').click();
    await page.locator('.overlay.confirm button[data-confirm="yes"]').click();
    // Repainted in place (chat.update): the same message, now DONE, marked edited.
    await expect
      .poll(() => same.locator(".bk-header").first().innerText(), { timeout: 60_000 })
      .toMatch(/DONE/);
    expect(await same.locator(".edited").count()).toBe(1);
    expect(await page.locator(`.msg[data-ts="${requestTs ?? ""}"]`).count()).toBe(1);

    // 5. The namespace goes; the bot says so in a thread, under its parent.
    const gone = page.locator(".thread .msg", { hasText: /Namespace myapp is gone/ });
    await gone.first().waitFor({ timeout: 60_000 });
    await screenshot(page, "04-approved-namespace-gone");

    // 6. The traffic path afterwards: the bot traces test.example.com from the same composer.
    await slash(page, "/unstuck trace test.example.com");
    const trace = page.locator(".msg[data-kind=message]", { hasText: "test.example.com" }).last();
    await trace.waitFor({ timeout: 30_000 });
    await screenshot(page, "05-trace");

    // 7. The post-mortem draft: its card, and the whole draft as a file in the thread, downloaded
    // by clicking its link as a person would.
    await slash(page, "/unstuck timeline");
    const link = page.locator(".thread .file a", { hasText: /postmortem-.*\.md/ });
    await link.first().waitFor({ timeout: 30_000 });
    const [download] = await Promise.all([page.waitForEvent("download"), link.first().click()]);
    expect(download.suggestedFilename()).toMatch(/^postmortem-.*\.md$/);
    const draft = await readFile(await download.path(), "utf8");
    expect(draft).toMatch(/^# /);
    expect(draft).toContain("myapp");
    expect(draft).toContain("myapp-worker-ingress");
    await screenshot(page, "06-postmortem-file");

    // Everything the bot posted rendered, and passed the linter.
    expect(await page.locator(".bk-unrenderable").count()).toBe(0);
    const lint = (await (await fetch(new URL("/api/lint", sandbox!.consoleUrl))).json()) as {
      ok: boolean;
      errors: number;
      problems: unknown[];
    };
    expect(lint.problems.filter((p) => (p as { severity: string }).severity === "error")).toEqual([]);
    expect(lint.ok).toBe(true);
    expect(scripts).toEqual([]);
    await page.close();
  }, 180_000);
});
