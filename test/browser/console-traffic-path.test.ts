/**
 * The traffic half of the seed incident from the browser (docs/incident.md, steps 8–11), on the sandbox as
 * `npm start` runs it: the namespace is freed (the finalize request, approved by a second person),
 * then the console's world bar has Argo CD re-sync myapp — the namespace and its Ingress come back and
 * the simulated Load Balancer Controller builds a new ALB with a new DNS name. `trace
 * test.example.com` shows CloudFront's origin still naming the deleted ALB; the bot's re-check in the
 * request's thread offers "Fix the path" and checks orphans again; the modal → the repair request →
 * approved by a second person → the request's thread reports CloudFront Deployed and
 * test.example.com answering 200. Screenshots of each step are kept in test-artifacts/browser/.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Locator, Page } from "playwright-core";
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

/** Approve the request in message `ts` as whoever the page acts as, through the confirm dialog. */
async function approve(page: Page, ts: string): Promise<void> {
  await page.locator(`.msg[data-ts="${ts}"] button[data-action-id="approval:approve"]`).first().click();
  await page.locator('.overlay.confirm button[data-confirm="yes"]').click();
}

/** Tick every required checkbox of an open modal (statements a form may ask the requester for). */
async function tickRequired(modal: Locator): Promise<void> {
  const boxes = modal.locator('.bk-input[data-type="checkboxes"]:not(:has(.optional)) input[type=checkbox]');
  for (let i = 0; i < (await boxes.count()); i++) await boxes.nth(i).check();
}

/** The `data-ts` of the first message `request` finds, once it is there. */
async function tsOf(request: Locator): Promise<string> {
  await request.first().waitFor({ timeout: 30_000 });
  const ts = (await request.first().getAttribute("data-ts")) ?? "";
  expect(ts).not.toBe("");
  return ts;
}

describe("the local Slack console, traffic path", () => {
  it("after the namespace is gone: Argo CD re-syncs, the stale origin is traced, Fix the path is requested and approved, CloudFront Deployed and test.example.com 200 in the thread, orphans checked", async () => {
    const page = await browser!.newPage({ viewport: { width: 1200, height: 900 } });
    const scripts: string[] = [];
    page.on("pageerror", (err) => scripts.push(err.message));
    await page.goto(`${sandbox!.consoleUrl}?as=U0ONCALL1`);
    await expect.poll(() => page.locator("#user").inputValue()).toBe("U0ONCALL1");

    // Argo CD cannot re-create a namespace that is still Terminating: the world event says so.
    const sync = page.locator('button[data-world-action="argo-sync"]');
    await sync.waitFor({ timeout: 15_000 });
    expect(await sync.innerText()).toBe("Argo CD re-syncs myapp");
    await sync.click();
    const refused = page.locator('.world-event[data-world-action="argo-sync"]').first();
    await expect.poll(() => refused.getAttribute("data-status"), { timeout: 15_000 }).toBe("refused");
    expect(await refused.innerText()).toMatch(/still Terminating/);

    // 1. Recovery first (step 7): the finalize request, approved by a second person; the namespace goes.
    await slash(
      page,
      '/unstuck finalize ingress/myapp-worker-ingress -n myapp --reason "cause confirmed: an ENI of the deleted ALB holds the shared SG; recovery first"',
    );
    const finalizeTs = await tsOf(
      page.locator(".msg[data-kind=message]", {
        has: page.locator('button[data-action-id="approval:approve"]'),
        hasText: /remove finalizer/,
      }),
    );
    await actAs(page, "U0APPROVER1");
    await approve(page, finalizeTs);
    const firstThread = page.locator(`.thread[data-thread-ts="${finalizeTs}"]`);
    await firstThread
      .locator(".msg", { hasText: /Namespace myapp is gone/ })
      .first()
      .waitFor({ timeout: 60_000 });
    // The bot's path card: broken, nothing to repoint to until the stack is back.
    await firstThread
      .locator(".msg", { hasText: /Traffic path of namespace myapp is broken/ })
      .first()
      .waitFor({ timeout: 30_000 });
    expect(await firstThread.locator('button[data-action-id="path:repair"]').count()).toBe(0);
    await screenshot(page, "path-01-namespace-gone");

    // 2. Argo CD re-syncs myapp (step 8): the namespace and its Ingress are back, with a new ALB.
    await sync.click();
    const synced = page.locator('.world-event[data-world-action="argo-sync"]').nth(1);
    await expect.poll(() => synced.getAttribute("data-status"), { timeout: 90_000 }).toBe("done");
    expect(await synced.innerText()).toMatch(
      /myapp-worker-ingress → new ALB k8s-myapp-[a-z0-9.-]+\.elb\.amazonaws\.com/,
    );
    await screenshot(page, "path-02-argo-resynced");

    // 3. The path now (step 9): CloudFront's origin for test.example.com still names the deleted ALB.
    await actAs(page, "U0ONCALL1");
    await slash(page, "/unstuck trace test.example.com");
    const trace = page
      .locator(".msg[data-kind=message]", { hasText: "Traffic path of test.example.com is broken" })
      .last();
    await trace.waitFor({ timeout: 30_000 });
    expect(await trace.innerText()).toMatch(/origin myapp-worker-alb → k8s-myapp-myappwor-0733a56cbb/);
    expect(await trace.innerText()).toMatch(/k8s-myapp-myappwor-0733a56cbb \(default behaviour\) \(gone\) ⇒/);
    await screenshot(page, "path-03-trace-stale-origin");

    // 4. The bot's re-check in the first thread saw the new ALB: the plan with "Fix the path", and the
    // orphan check again now that the stack is back (step 11).
    const offer = firstThread.locator(".msg", { has: page.locator('button[data-action-id="path:repair"]') });
    await offer.first().waitFor({ timeout: 60_000 });
    expect(await offer.first().innerText()).toMatch(/UpdateDistribution E2MYAPPTEST0001/);
    const orphans = firstThread.locator(".msg", { hasText: /After the re-creation/ });
    await orphans.first().waitFor({ timeout: 30_000 });
    expect(await orphans.first().innerText()).toMatch(/orphan/i);
    await screenshot(page, "path-04-fix-the-path-offered");

    // 5. Fix the path → the modal asks why → the repair request.
    await offer.first().locator('button[data-action-id="path:repair"]').click();
    const modal = page.locator(".overlay.modal .dialog");
    await modal.waitFor({ timeout: 15_000 });
    await modal
      .locator('.bk-input[data-block-id="reason"]')
      .locator("textarea, input")
      .first()
      .fill("test.example.com answers 502: CloudFront's origin names the deleted worker ALB");
    await tickRequired(modal);
    await screenshot(page, "path-05-repair-modal");
    await modal.locator('button[data-modal="submit"]').click();
    await modal.waitFor({ state: "detached", timeout: 15_000 });
    const repair = page.locator(".msg", {
      has: page.locator('button[data-action-id="approval:approve"]'),
      hasText: /repoint/,
    });
    const repairTs = await tsOf(repair);
    expect(await repair.first().innerText()).toMatch(/Changes: repoint/);
    // The exact calls are behind Details, answered only to the one who clicks.
    await repair.first().locator('button[data-action-id="approval:details"]').click();
    const details = page.locator(".msg.ephemeral", { hasText: /If-Match/ });
    await details.first().waitFor({ timeout: 15_000 });
    expect(await details.first().locator(".only-you").innerText()).toBe("Only visible to you");

    // 6. A second person approves (step 10); the request's thread: CloudFront Deployed, then 200.
    await actAs(page, "U0APPROVER2");
    await approve(page, repairTs);
    const repaired = page.locator(`.msg[data-ts="${repairTs}"]`).first();
    await expect
      .poll(() => repaired.locator(".bk-header").first().innerText(), { timeout: 60_000 })
      .toMatch(/DONE/);
    const repairThread = page.locator(`.thread[data-thread-ts="${repairTs}"]`);
    await repairThread
      .locator(".msg", { hasText: /E2MYAPPTEST0001 is Deployed/ })
      .first()
      .waitFor({ timeout: 60_000 });
    await repairThread
      .locator(".msg", { hasText: /test\.example\.com.*answers 200/ })
      .first()
      .waitFor({ timeout: 60_000 });
    await screenshot(page, "path-06-deployed-200");
    // The offer the repair was asked from lost its button once the repair was made, and says so.
    await expect
      .poll(() => firstThread.locator('button[data-action-id="path:repair"]').count(), { timeout: 30_000 })
      .toBe(0);
    expect(await firstThread.locator(".msg", { hasText: /Repaired/ }).count()).toBe(1);

    // Everything the bot posted rendered, and passed the linter.
    expect(await page.locator(".bk-unrenderable").count()).toBe(0);
    const lint = (await (await fetch(new URL("/api/lint", sandbox!.consoleUrl))).json()) as {
      ok: boolean;
      problems: unknown[];
    };
    expect(lint.problems.filter((p) => (p as { severity: string }).severity === "error")).toEqual([]);
    expect(scripts).toEqual([]);
    await page.close();
  }, 300_000);
});
