/**
 * Configuration, read once at start-up from the environment and validated. No other module reads
 * `process.env`; everything else receives a typed `Config`.
 */
import { z } from "zod";
import { ErrorCode, UnstuckError } from "./errors.js";

const idList = z
  .string()
  .optional()
  .transform((v) =>
    (v ?? "")
      .split(/[\s,]+/)
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  );

const EnvSchema = z.object({
  SLACK_BOT_TOKEN: z.string().optional(),
  SLACK_SIGNING_SECRET: z.string().optional(),
  SLACK_APP_TOKEN: z.string().optional(),
  SLACK_API_URL: z.url().optional(),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  REDIS_URL: z.string().default("redis://127.0.0.1:6379"),
  KUBECONFIG: z.string().optional(),
  UNSTUCK_CHANNELS: idList,
  UNSTUCK_APPROVERS: idList,
  UNSTUCK_APPROVALS_REQUIRED: z.coerce.number().int().min(1).max(10).default(1),
  UNSTUCK_REQUEST_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(1800),
  UNSTUCK_AUDIT_CHANNEL: z.string().optional(),
  UNSTUCK_REDIS_PREFIX: z.string().default("unstuck"),
  UNSTUCK_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  UNSTUCK_COMMAND: z.string().default("/unstuck"),
  /** Terminating longer than this with finalizers remaining counts as blocked, not slow. */
  UNSTUCK_BLOCKED_AFTER_SECONDS: z.coerce.number().int().min(0).default(300),
});

export interface SlackConfig {
  readonly botToken: string;
  readonly signingSecret: string;
  readonly appToken?: string;
  readonly apiUrl?: string;
}

export interface Config {
  /** Present only when both the bot token and the signing secret are set. */
  readonly slack?: SlackConfig;
  /** Slack variables that are missing (for the "what to set" message). */
  readonly missingSlack: readonly string[];
  readonly port: number;
  readonly redisUrl: string;
  readonly kubeconfig?: string;
  readonly channels: readonly string[];
  readonly approvers: readonly string[];
  readonly approvalsRequired: number;
  readonly requestTtlSeconds: number;
  readonly auditChannel?: string;
  readonly redisPrefix: string;
  readonly logLevel: string;
  readonly command: string;
  readonly blockedAfterSeconds: number;
}

/** Parse an environment; throws `UnstuckError(Config)` naming the variable at fault. */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = EnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const variable = String(issue?.path[0] ?? "environment");
    throw new UnstuckError(ErrorCode.Config, `Invalid ${variable}: ${issue?.message ?? "invalid value"}.`, {
      variable,
    });
  }
  const e = parsed.data;
  const missingSlack: string[] = [];
  if (!e.SLACK_BOT_TOKEN) missingSlack.push("SLACK_BOT_TOKEN");
  if (!e.SLACK_SIGNING_SECRET && !e.SLACK_APP_TOKEN) missingSlack.push("SLACK_SIGNING_SECRET");
  const slack: SlackConfig | undefined =
    e.SLACK_BOT_TOKEN && (e.SLACK_SIGNING_SECRET || e.SLACK_APP_TOKEN)
      ? {
          botToken: e.SLACK_BOT_TOKEN,
          signingSecret: e.SLACK_SIGNING_SECRET ?? "",
          ...(e.SLACK_APP_TOKEN ? { appToken: e.SLACK_APP_TOKEN } : {}),
          ...(e.SLACK_API_URL ? { apiUrl: e.SLACK_API_URL } : {}),
        }
      : undefined;
  return {
    ...(slack ? { slack } : {}),
    missingSlack,
    port: e.PORT,
    redisUrl: e.REDIS_URL,
    ...(e.KUBECONFIG ? { kubeconfig: e.KUBECONFIG } : {}),
    channels: e.UNSTUCK_CHANNELS,
    approvers: e.UNSTUCK_APPROVERS,
    approvalsRequired: e.UNSTUCK_APPROVALS_REQUIRED,
    requestTtlSeconds: e.UNSTUCK_REQUEST_TTL_SECONDS,
    ...(e.UNSTUCK_AUDIT_CHANNEL ? { auditChannel: e.UNSTUCK_AUDIT_CHANNEL } : {}),
    redisPrefix: e.UNSTUCK_REDIS_PREFIX,
    logLevel: e.UNSTUCK_LOG_LEVEL,
    command: e.UNSTUCK_COMMAND,
    blockedAfterSeconds: e.UNSTUCK_BLOCKED_AFTER_SECONDS,
  };
}
