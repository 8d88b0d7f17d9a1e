/**
 * AWS calls are bounded: an endpoint that accepts a call and never answers it fails the call with a
 * coded error naming the IAM action, within the configured timeout, retries included — and a
 * stopping simulator is not held open by the hung connection.
 */
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAwsClients, destroyAwsClients, type AwsClients } from "../../src/aws/clients.js";
import { createAwsAdapter } from "../../src/aws/sdk-adapter.js";
import { ErrorCode, UnstuckError } from "../../src/errors.js";
import { readAwsScenario, startAwsSim, type AwsSim } from "../sim/aws/index.js";

const scenario = fileURLToPath(new URL("../fixtures/scenarios/aws-seed-incident.yaml", import.meta.url));

describe("AWS calls against a hanging endpoint", () => {
  let sim: AwsSim;
  let clients: AwsClients;
  const timeoutMs = 600;

  beforeEach(async () => {
    sim = await startAwsSim({ scenario: readAwsScenario(scenario) });
    clients = createAwsClients({
      region: sim.world.region,
      endpoint: sim.url,
      credentials: { accessKeyId: "AKIAUNSTUCKTEST00001", secretAccessKey: "not-checked" },
      // Retries must not multiply the bound.
      maxAttempts: 5,
      timeoutMs,
    });
  });
  afterEach(async () => {
    destroyAwsClients(clients);
    await sim.stop();
  });

  it("a hung action fails within the timeout as a coded error naming the action; others still answer", async () => {
    sim.setFaults({ hang: ["ec2:DescribeNetworkInterfaces"] });
    const aws = createAwsAdapter(clients);
    const groupId = [...sim.world.securityGroups.keys()][0] ?? "sg-missing";
    const started = Date.now();
    const err = await aws.networkInterfacesUsing(groupId).catch((e: unknown) => e);
    const elapsed = Date.now() - started;
    expect(err).toBeInstanceOf(UnstuckError);
    expect((err as UnstuckError).code).toBe(ErrorCode.Upstream);
    expect((err as UnstuckError).message).toContain("DescribeNetworkInterfaces");
    expect((err as UnstuckError).message).toMatch(/no answer within|timed? ?out/i);
    expect(elapsed).toBeGreaterThanOrEqual(timeoutMs - 50);
    expect(elapsed).toBeLessThan(timeoutMs + 1000);
    expect(sim.calls().some((c) => c.action === "DescribeNetworkInterfaces" && c.errorCode === "Hang")).toBe(
      true,
    );
    // Only the hung action hangs.
    expect((await aws.securityGroups({ ids: [groupId] })).length).toBe(1);
  });
});
