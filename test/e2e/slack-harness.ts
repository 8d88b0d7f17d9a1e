/**
 * Runs the real Bolt app over HTTP on an ephemeral port against the fake Slack Web API, and sends it signed
 * requests the way Slack does. Every Kubernetes call goes through a counting wrapper so tests can prove that
 * refused or invalid requests never reach the cluster.
 */
import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import { pino } from "pino";
import { defaultRegistry, type Registry } from "../../commands/index.js";
import type { ApprovalServices } from "../../commands/types.js";
import { loadConfig } from "../../src/config.js";
import type { KubePort } from "../../src/kube/port.js";
import { REDACT_PATHS } from "../../src/log.js";
import type { Logger } from "../../src/log.js";
import { createSlackApp, SLACK_EVENTS_PATH, type SlackApp, type SlackAppDeps } from "../../src/slack/app.js";
import {
  blockActionsBody,
  postSigned,
  slashCommandBody,
  startFakeSlack,
  viewSubmissionBody,
  type BlockActionFields,
  type FakeSlack,
  type SlashCommandFields,
  type ViewSubmissionFields,
} from "../sim/slack/index.js";

export interface HarnessOptions {
  readonly kube: KubePort;
  /** `UNSTUCK_CHANNELS`; empty allows all. */
  readonly channels?: readonly string[];
  /** `UNSTUCK_CHANNEL_PATTERNS`: channel names allowed besides the ids. */
  readonly channelPatterns?: readonly string[];
  readonly now?: () => Date;
  /** The approval engine for commands that need it (resolved lazily: it is usually built after start). */
  readonly approvals?: () => ApprovalServices | undefined;
  readonly afterPost?: SlackAppDeps["afterPost"];
}

export interface SentRequest {
  readonly status: number;
  readonly text: string;
  readonly elapsedMs: number;
  /** The id of the `response_url` this request carried (for `fake.waitForResponse`). */
  readonly responseId: string;
}

export interface Harness {
  readonly fake: FakeSlack;
  readonly slack: SlackApp;
  readonly registry: Registry;
  readonly baseUrl: string;
  readonly eventsUrl: string;
  readonly signingSecret: string;
  readonly botToken: string;
  /** Names of the KubePort methods called so far. */
  kubeCalls(): string[];
  /** Every log line the app wrote (JSON, as it would reach stdout). */
  logs(): string;
  /** The app's logger, for pieces a test composes around the app. */
  readonly log: Logger;
  command(
    text: string,
    fields?: Partial<Omit<SlashCommandFields, "text" | "responseUrl">>,
    sign?: { secret?: string; timestamp?: number },
  ): Promise<SentRequest>;
  action(fields: Omit<BlockActionFields, "responseUrl">): Promise<SentRequest>;
  /** Submit a modal, signed; the HTTP answer carries the ack body (e.g. `response_action: "errors"`). */
  viewSubmission(fields: ViewSubmissionFields): Promise<SentRequest>;
  stop(): Promise<void>;
}

let responseCounter = 0;

export async function startHarness(options: HarnessOptions): Promise<Harness> {
  const botToken = `xoxb-${randomBytes(6).toString("hex")}-${randomBytes(12).toString("hex")}`;
  const signingSecret = randomBytes(16).toString("hex");
  const fake = await startFakeSlack({ token: botToken });

  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString("utf8"));
      done();
    },
  });
  const log = pino({ level: "debug", redact: { paths: REDACT_PATHS, censor: "[redacted]" } }, sink);

  const kubeCalls: string[] = [];
  const kube = countingKube(options.kube, kubeCalls);
  const config = loadConfig({
    SLACK_BOT_TOKEN: botToken,
    SLACK_SIGNING_SECRET: signingSecret,
    SLACK_API_URL: fake.url,
    PORT: "0",
    UNSTUCK_CHANNELS: (options.channels ?? []).join(","),
    UNSTUCK_CHANNEL_PATTERNS: (options.channelPatterns ?? []).join(","),
  });
  const now = options.now ?? (() => new Date());
  const registry = defaultRegistry(config.command);
  const services = { kube, now, log };
  const approvals = options.approvals;
  if (approvals !== undefined) {
    Object.defineProperty(services, "approvals", { enumerable: true, get: approvals });
  }
  const slack = createSlackApp({
    config,
    registry,
    services,
    log,
    now,
    ...(options.afterPost !== undefined ? { afterPost: options.afterPost } : {}),
  });
  const { port } = await slack.start();
  if (port === undefined) throw new Error("HTTP mode must report its port");
  const baseUrl = `http://127.0.0.1:${port}`;
  const eventsUrl = `${baseUrl}${SLACK_EVENTS_PATH}`;

  const nextResponseId = (): string => `r${++responseCounter}-${randomBytes(3).toString("hex")}`;

  return {
    fake,
    slack,
    registry,
    baseUrl,
    eventsUrl,
    signingSecret,
    botToken,
    kubeCalls: () => [...kubeCalls],
    logs: () => chunks.join(""),
    log,
    async command(text, fields = {}, sign = {}) {
      const responseId = nextResponseId();
      const body = slashCommandBody({ ...fields, text, responseUrl: fake.responseUrl(responseId) });
      const res = await postSigned(eventsUrl, sign.secret ?? signingSecret, body, sign.timestamp);
      return { ...res, responseId };
    },
    async action(fields) {
      const responseId = nextResponseId();
      const body = blockActionsBody({ ...fields, responseUrl: fake.responseUrl(responseId) });
      const res = await postSigned(eventsUrl, signingSecret, body);
      return { ...res, responseId };
    },
    async viewSubmission(fields) {
      const res = await postSigned(eventsUrl, signingSecret, viewSubmissionBody(fields));
      return { ...res, responseId: "" };
    },
    async stop() {
      await slack.stop();
      await fake.stop();
    },
  };
}

/** Wrap a KubePort so each method call is recorded by name before it runs. */
function countingKube(kube: KubePort, calls: string[]): KubePort {
  return new Proxy(kube, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls.push(String(property));
        return Reflect.apply(value, target, args);
      };
    },
  });
}

/** All text of a Block Kit message, for "does it name X" assertions. */
export function messageText(body: Record<string, unknown>): string {
  return `${typeof body["text"] === "string" ? body["text"] : ""}\n${JSON.stringify(body["blocks"] ?? [])}`;
}

/** A promise with its resolver exposed, to hold a fake dependency at a known point. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
