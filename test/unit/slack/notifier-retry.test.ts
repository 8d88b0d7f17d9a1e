/**
 * The retry loop behind the request-message edits: Slack's Retry-After is waited out exactly, other
 * transient failures back off, permanent ones end at once, and the loop never outlives its budget.
 */
import { webApi } from "@slack/bolt";
import { describe, expect, it } from "vitest";
import { retrying, type RetryVerdict } from "../../../src/approvals/notifier.js";
import { slackRetryVerdict } from "../../../src/slack/notifier.js";

/** A sleep that only records how long it was asked to wait. */
function recordingSleep(): { sleep: (ms: number) => Promise<void>; waits: number[] } {
  const waits: number[] = [];
  return {
    waits,
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
  };
}

function failing(times: number, err: Error): { attempt: (n: number) => Promise<string>; seen: number[] } {
  const seen: number[] = [];
  return {
    seen,
    attempt: (n) => {
      seen.push(n);
      return n <= times ? Promise.reject(err) : Promise.resolve(`ok after ${String(n)}`);
    },
  };
}

describe("retrying", () => {
  it("waits exactly what the verdict names (Retry-After) before the next attempt", async () => {
    const { sleep, waits } = recordingSleep();
    const task = failing(2, new Error("limited"));
    const classify = (): RetryVerdict => ({ retry: true, afterMs: 7_000, why: "rate limited" });
    await expect(retrying(task.attempt, classify, { sleep })).resolves.toBe("ok after 3");
    expect(waits).toEqual([7_000, 7_000]);
    expect(task.seen).toEqual([1, 2, 3]);
  });

  it("backs off exponentially, capped, when no wait is named", async () => {
    const { sleep, waits } = recordingSleep();
    const task = failing(5, new Error("503"));
    const classify = (): RetryVerdict => ({ retry: true, why: "HTTP 503" });
    await retrying(task.attempt, classify, { sleep, baseDelayMs: 100, maxDelayMs: 500, random: () => 1 });
    expect(waits).toEqual([100, 200, 400, 500, 500]);
  });

  it("gives up at once on a permanent failure, and after the last attempt otherwise", async () => {
    const { sleep, waits } = recordingSleep();
    const permanent = failing(10, new Error("message_not_found"));
    await expect(retrying(permanent.attempt, () => ({ retry: false }), { sleep })).rejects.toThrow(
      "message_not_found",
    );
    expect(permanent.seen).toEqual([1]);
    const transient = failing(10, new Error("internal_error"));
    await expect(
      retrying(transient.attempt, () => ({ retry: true, why: "x" }), { sleep, attempts: 3 }),
    ).rejects.toThrow("internal_error");
    expect(transient.seen).toEqual([1, 2, 3]);
    expect(waits).toHaveLength(2);
  });

  it("never retries sooner than Retry-After: a wait beyond the budget ends the loop instead", async () => {
    const { sleep, waits } = recordingSleep();
    const task = failing(10, new Error("limited"));
    await expect(
      retrying(task.attempt, () => ({ retry: true, afterMs: 30_000, why: "rate limited" }), {
        sleep,
        budgetMs: 45_000,
      }),
    ).rejects.toThrow("limited");
    expect(waits).toEqual([30_000]);
    expect(task.seen).toEqual([1, 2]);
  });
});

describe("slackRetryVerdict", () => {
  it("reads Retry-After from a rate-limited error and retries 5xx, network and transient platform errors", () => {
    expect(slackRetryVerdict(new webApi.WebAPIRateLimitedError(3))).toMatchObject({
      retry: true,
      afterMs: 3_000,
    });
    expect(slackRetryVerdict(new webApi.WebAPIHTTPError(503, "Service Unavailable", {}, ""))).toMatchObject({
      retry: true,
    });
    expect(slackRetryVerdict(new webApi.WebAPIHTTPError(404, "Not Found", {}, ""))).toEqual({ retry: false });
    expect(slackRetryVerdict(new webApi.WebAPIRequestError(new Error("ECONNRESET")))).toMatchObject({
      retry: true,
    });
    const platform = (error: string) =>
      Object.assign(new Error(error), { code: webApi.ErrorCode.PlatformError, data: { ok: false, error } });
    expect(slackRetryVerdict(platform("internal_error"))).toMatchObject({ retry: true });
    expect(slackRetryVerdict(platform("message_not_found"))).toEqual({ retry: false });
    expect(slackRetryVerdict(platform("cant_update_message"))).toEqual({ retry: false });
    expect(slackRetryVerdict(new Error("boom"))).toEqual({ retry: false });
  });
});
