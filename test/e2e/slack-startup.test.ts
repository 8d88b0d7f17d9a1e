/**
 * Start-up and transport selection: the app verifies its token before listening and fails with a message that
 * names the variable (never the token), picks Socket Mode when an app token is set, and refuses to be built
 * without Slack configuration.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultRegistry } from "../../commands/index.js";
import { loadConfig } from "../../src/config.js";
import { ErrorCode, UnstuckError } from "../../src/errors.js";
import type { KubePort } from "../../src/kube/port.js";
import { silentLogger } from "../../src/log.js";
import { createSlackApp } from "../../src/slack/app.js";
import { startFakeSlack, type FakeSlack } from "../sim/slack/index.js";

/** These tests never reach a command, so any cluster access is a bug. */
const noKube = new Proxy({} as KubePort, {
  get: (_target, property) => () => Promise.reject(new Error(`unexpected kube call ${String(property)}`)),
});

function deps(env: Record<string, string>) {
  const log = silentLogger();
  const config = loadConfig(env);
  return {
    config,
    registry: defaultRegistry(config.command),
    services: { kube: noKube, now: () => new Date(), log },
    log,
  };
}

describe("Slack app start-up", () => {
  let fake: FakeSlack;

  beforeAll(async () => {
    fake = await startFakeSlack({ token: "xoxb-the-real-one" });
  });
  afterAll(async () => {
    await fake.stop();
  });

  it("fails fast on a token Slack rejects, naming the variable but not the token, and does not listen", async () => {
    const slack = createSlackApp(
      deps({
        SLACK_BOT_TOKEN: "xoxb-revoked-token-123",
        SLACK_SIGNING_SECRET: "s3cr3t-signing",
        SLACK_API_URL: fake.url,
        PORT: "0",
      }),
    );
    const failure = await slack.start().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(UnstuckError);
    const err = failure as UnstuckError;
    expect(err.code).toBe(ErrorCode.Config);
    expect(err.message).toContain("SLACK_BOT_TOKEN");
    expect(err.message).toContain("invalid_auth");
    expect(err.message).not.toContain("xoxb-revoked-token-123");
    // Never started, so stopping is a no-op rather than an error.
    await slack.stop();
    expect(fake.calls().map((c) => c.method)).toContain("auth.test");
  });

  it("starts over HTTP on the real bound port when PORT=0, and stops cleanly twice", async () => {
    const slack = createSlackApp(
      deps({
        SLACK_BOT_TOKEN: fake.token,
        SLACK_SIGNING_SECRET: "s3cr3t-signing",
        SLACK_API_URL: fake.url,
        PORT: "0",
      }),
    );
    expect(slack.mode).toBe("http");
    const { port } = await slack.start();
    expect(port).toBeGreaterThan(0);
    const health = await fetch(`http://127.0.0.1:${port ?? 0}/healthz`);
    expect(health.status).toBe(200);
    await slack.stop();
    await slack.stop();
    await expect(fetch(`http://127.0.0.1:${port ?? 0}/healthz`)).rejects.toThrow();
  });

  it("selects Socket Mode when an app token is configured", () => {
    const slack = createSlackApp(
      deps({ SLACK_BOT_TOKEN: fake.token, SLACK_APP_TOKEN: "xapp-1-A0-123-abc", SLACK_API_URL: fake.url }),
    );
    expect(slack.mode).toBe("socket");
  });

  it("refuses to build without Slack configuration, naming what is missing", () => {
    expect(() => createSlackApp(deps({}))).toThrow(/SLACK_BOT_TOKEN/);
  });
});
