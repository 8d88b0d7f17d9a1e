import { describe, expect, it } from "vitest";
import { ErrorCode, UnstuckError } from "../../../src/errors.js";
import { oneLine } from "../../../src/start-bot.js";
import { StartupError } from "../../../src/startup.js";

describe("the line a bot that cannot start writes to stderr", () => {
  it("says the bot's own errors as they are", () => {
    expect(oneLine(new UnstuckError(ErrorCode.Config, "SLACK_BOT_TOKEN is missing."))).toBe(
      "SLACK_BOT_TOKEN is missing.",
    );
  });

  it("says a failed start-up check as it is", () => {
    expect(oneLine(new StartupError("Redis at redis.internal:6380 is unreachable (ECONNREFUSED)"))).toBe(
      "Redis at redis.internal:6380 is unreachable (ECONNREFUSED)",
    );
  });

  it("names an unexpected failure by its class and message, not a log that holds nothing yet", () => {
    const line = oneLine(new TypeError("undici_1.WebSocket is not a constructor"));
    expect(line).toBe("unexpected TypeError: undici_1.WebSocket is not a constructor");
    expect(line).not.toMatch(/bot's log/);
    expect(oneLine("a string thrown")).toBe("unexpected string: a string thrown");
  });

  it("masks credentials in a URL, keeps to one line and to 500 characters", () => {
    const line = oneLine(
      new Error(`connect to redis://default:s3cret@redis.internal:6380 failed\n  at x\n${"y".repeat(900)}`),
    );
    expect(line).not.toContain("s3cret");
    expect(line).toContain("redis://[redacted]@redis.internal:6380");
    expect(line).not.toContain("\n");
    expect(line.length).toBeLessThanOrEqual(500);
  });
});
