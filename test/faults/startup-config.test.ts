/**
 * The bounds and the Redis switch are configuration like any other: defaults when unset, fractions
 * of a second accepted (tests use them), and a bad value names its variable.
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { ErrorCode, UnstuckError } from "../../src/errors.js";

describe("deadline, start-up and Redis configuration", () => {
  it("has bounded defaults, and the volatile-Redis switch is off unless set", () => {
    const c = loadConfig({});
    for (const ms of [
      c.kubeTimeoutMs,
      c.awsTimeoutMs,
      c.diagnosisDeadlineMs,
      c.startupTimeoutMs,
      c.shutdownTimeoutMs,
    ]) {
      expect(ms).toBeGreaterThan(0);
      expect(ms).toBeLessThanOrEqual(60_000);
    }
    // A single request must be able to time out before the whole diagnosis does.
    expect(c.kubeTimeoutMs).toBeLessThan(c.diagnosisDeadlineMs);
    expect(c.allowVolatileRedis).toBe(false);
  });

  it("reads each variable, in seconds, fractions included", () => {
    const c = loadConfig({
      UNSTUCK_KUBE_TIMEOUT_SECONDS: "0.5",
      UNSTUCK_AWS_TIMEOUT_SECONDS: "3",
      UNSTUCK_DIAGNOSIS_DEADLINE_SECONDS: "7.5",
      UNSTUCK_STARTUP_TIMEOUT_SECONDS: "4",
      UNSTUCK_SHUTDOWN_TIMEOUT_SECONDS: "2",
      UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
    });
    expect([
      c.kubeTimeoutMs,
      c.awsTimeoutMs,
      c.diagnosisDeadlineMs,
      c.startupTimeoutMs,
      c.shutdownTimeoutMs,
    ]).toEqual([500, 3000, 7500, 4000, 2000]);
    expect(c.allowVolatileRedis).toBe(true);
  });

  it.each([
    ["UNSTUCK_KUBE_TIMEOUT_SECONDS", "0"],
    ["UNSTUCK_AWS_TIMEOUT_SECONDS", "-1"],
    ["UNSTUCK_DIAGNOSIS_DEADLINE_SECONDS", "soon"],
    ["UNSTUCK_STARTUP_TIMEOUT_SECONDS", "100000"],
    ["UNSTUCK_ALLOW_VOLATILE_REDIS", "yes-please"],
  ])("refuses %s=%s, naming the variable", (variable, value) => {
    const err = (() => {
      try {
        loadConfig({ [variable]: value });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(UnstuckError);
    expect((err as UnstuckError).code).toBe(ErrorCode.Config);
    expect((err as UnstuckError).message).toContain(variable);
  });
});
