import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config.js";
import { ErrorCode, UnstuckError } from "../../../src/errors.js";

function configError(fn: () => unknown): UnstuckError {
  try {
    fn();
  } catch (err) {
    if (err instanceof UnstuckError) return err;
    throw err;
  }
  throw new Error("expected a config error");
}

const env = { UNSTUCK_CLUSTERS_FILE: "/clusters.yaml", UNSTUCK_CLUSTER_NAME: "prod-eu" };

describe("the clusters file's roles (roleArn, externalId, edge)", () => {
  it("reads the cluster's role and the edge account's role with their external ids", () => {
    const file = [
      "clusters:",
      "  prod-eu:",
      "    region: eu-west-1",
      "    roleArn: arn:aws:iam::111111111111:role/unstuck",
      "    externalId: cluster-ext",
      "    edge:",
      "      roleArn: arn:aws:iam::222222222222:role/path/unstuck-edge",
      "      externalId: edge-ext",
      "",
    ].join("\n");
    expect(loadConfig(env, () => file).aws).toEqual({
      region: "eu-west-1",
      roleArn: "arn:aws:iam::111111111111:role/unstuck",
      externalId: "cluster-ext",
      edge: { roleArn: "arn:aws:iam::222222222222:role/path/unstuck-edge", externalId: "edge-ext" },
    });
  });

  it("without roles the settings are exactly as before", () => {
    const file = "clusters:\n  prod-eu: { region: eu-west-1, profile: prod }\n";
    expect(loadConfig(env, () => file).aws).toEqual({ region: "eu-west-1", profile: "prod" });
  });

  it.each([
    ["roleArn: unstuck", "clusters.prod-eu.roleArn", /must be an IAM role ARN/],
    ["roleArn: arn:aws:iam::1111:role/x", "clusters.prod-eu.roleArn", /must be an IAM role ARN/],
    ["roleArn: arn:aws:iam::111111111111:user/x", "clusters.prod-eu.roleArn", /must be an IAM role ARN/],
    ["externalId: x", "clusters.prod-eu.externalId", /2 to 1224 characters/],
    ["edge: { externalId: abc }", "clusters.prod-eu.edge.roleArn", /./],
    ["edge: { roleArn: arn:aws:iam::222222222222:role/e, role: typo }", "clusters.prod-eu.edge", /./],
  ])("refuses %s, naming the field", (line, path, why) => {
    const file = `clusters:\n  prod-eu:\n    region: eu-west-1\n    ${line}\n`;
    const err = configError(() => loadConfig(env, () => file));
    expect(err.code).toBe(ErrorCode.Config);
    expect(err.details.variable).toBe("UNSTUCK_CLUSTERS_FILE");
    expect(err.message).toContain(`Invalid UNSTUCK_CLUSTERS_FILE: ${path}`);
    expect(err.message).toMatch(why);
  });
});
