import { pino, type Logger } from "pino";

/** Paths that must never reach a log line (tokens, signing secrets, credentials). */
export const REDACT_PATHS = [
  "token",
  "botToken",
  "appToken",
  "signingSecret",
  "password",
  "secretAccessKey",
  "sessionToken",
  "authorization",
  "*.token",
  "*.botToken",
  "*.appToken",
  "*.signingSecret",
  "*.password",
  "*.secretAccessKey",
  "*.sessionToken",
  "*.authorization",
  "headers.authorization",
  "req.headers.authorization",
  'req.headers["x-slack-signature"]',
];

export type { Logger };

export function createLogger(
  options: { level?: string; name?: string; /** 1 = stdout, 2 = stderr */ fd?: 1 | 2 } = {},
): Logger {
  return pino(
    {
      name: options.name ?? "unstuck",
      level: options.level ?? "info",
      redact: { paths: REDACT_PATHS, censor: "[redacted]" },
      // `"level":"warn"`, not pino's number: what log pipelines filter and alert on by name.
      formatters: { level: (label) => ({ level: label }) },
    },
    pino.destination({ fd: options.fd ?? 1, sync: options.fd === 2 }),
  );
}

export { silentLogger } from "./log-silent.js";
