import { describe, expect, it } from "vitest";
import { randomApprovalKey } from "../../../src/approvals/integrity.js";
import { loadConfig, requireApprovalKey } from "../../../src/config.js";
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

describe("loadConfig", () => {
  it("names the missing Slack variables and has no Slack config without them", () => {
    const c = loadConfig({});
    expect(c.slack).toBeUndefined();
    expect(c.missingSlack).toEqual(["SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET"]);
    expect(c.approvalsRequired).toBe(1);
    expect(c.requestTtlSeconds).toBe(1800);
  });

  it("accepts Socket Mode without a signing secret", () => {
    const c = loadConfig({ SLACK_BOT_TOKEN: "xoxb-1", SLACK_APP_TOKEN: "xapp-1" });
    expect(c.slack?.appToken).toBe("xapp-1");
  });

  it("splits id lists on commas and spaces", () => {
    const c = loadConfig({ UNSTUCK_CHANNELS: "C1, C2 C3", UNSTUCK_APPROVERS: "U1,S2" });
    expect(c.channels).toEqual(["C1", "C2", "C3"]);
    expect(c.approvers).toEqual(["U1", "S2"]);
  });

  it.each([
    ["PORT", "http"],
    ["SLACK_API_URL", "not a url"],
    ["UNSTUCK_APPROVALS_REQUIRED", "0"],
    ["UNSTUCK_REQUEST_TTL_SECONDS", "5"],
    ["UNSTUCK_CLUSTER_NAME", "bad name!"],
    ["UNSTUCK_APPROVAL_KEY", "x".repeat(31)],
  ])("names %s when its value is invalid", (variable, value) => {
    const err = configError(() => loadConfig({ [variable]: value }));
    expect(err.code).toBe(ErrorCode.Config);
    expect(err.message).toContain(variable);
    expect(err.details.variable).toBe(variable);
  });

  it("maps the cluster to its AWS account settings from the clusters file", () => {
    const file =
      "clusters:\n  prod-eks: { region: ap-northeast-2, profile: prod }\n  stage: { region: eu-west-1 }\n";
    const c = loadConfig({ UNSTUCK_CLUSTERS_FILE: "/x.yaml", UNSTUCK_CLUSTER_NAME: "prod-eks" }, () => file);
    expect(c.aws).toEqual({ region: "ap-northeast-2", profile: "prod" });
    const err = configError(() =>
      loadConfig({ UNSTUCK_CLUSTERS_FILE: "/x.yaml", UNSTUCK_CLUSTER_NAME: "other" }, () => file),
    );
    expect(err.message).toMatch(/other is not one of the clusters/);
    const unreadable = configError(() =>
      loadConfig({ UNSTUCK_CLUSTERS_FILE: "/missing.yaml" }, () => {
        throw new Error("ENOENT");
      }),
    );
    expect(unreadable.details.variable).toBe("UNSTUCK_CLUSTERS_FILE");
  });

  it("takes AWS settings from the standard variables, and none without a region", () => {
    expect(loadConfig({}).aws).toBeUndefined();
    expect(
      loadConfig({ AWS_REGION: "ap-northeast-2", AWS_ENDPOINT_URL: "http://127.0.0.1:4566" }).aws,
    ).toEqual({
      region: "ap-northeast-2",
      endpoint: "http://127.0.0.1:4566",
    });
  });

  it("takes static AWS keys from the environment it is given, both or neither", () => {
    const c = loadConfig({ AWS_REGION: "eu-west-1", AWS_ACCESS_KEY_ID: "AKIA1", AWS_SECRET_ACCESS_KEY: "s" });
    expect(c.aws?.credentials).toEqual({ accessKeyId: "AKIA1", secretAccessKey: "s" });
    const err = configError(() => loadConfig({ AWS_REGION: "eu-west-1", AWS_ACCESS_KEY_ID: "AKIA1" }));
    expect(err.details.variable).toBe("AWS_SECRET_ACCESS_KEY");
  });

  it("UNSTUCK_APPROVAL_KEY: at least 32 bytes, required to run the bot, never part of an error message", () => {
    const key = randomApprovalKey();
    const c = loadConfig({ UNSTUCK_APPROVAL_KEY: key });
    expect(requireApprovalKey(c)).toBe(key);
    const short = configError(() => loadConfig({ UNSTUCK_APPROVAL_KEY: "short-secret" }));
    expect(short.message).toMatch(/UNSTUCK_APPROVAL_KEY.*32 bytes/);
    expect(short.message).not.toContain("short-secret");
    const missing = configError(() => requireApprovalKey(loadConfig({})));
    expect(missing.code).toBe(ErrorCode.Config);
    expect(missing.details.variable).toBe("UNSTUCK_APPROVAL_KEY");
    expect(missing.message).toMatch(/UNSTUCK_APPROVAL_KEY is not set/);
  });

  it("UNSTUCK_APPROVAL_KEY_PREVIOUS: the key being retired, beside the current one, never part of an error message", () => {
    const key = randomApprovalKey();
    const previous = randomApprovalKey();
    const c = loadConfig({ UNSTUCK_APPROVAL_KEY: key, UNSTUCK_APPROVAL_KEY_PREVIOUS: previous });
    expect(c.approvalKeyPrevious).toBe(previous);
    expect(loadConfig({ UNSTUCK_APPROVAL_KEY: key }).approvalKeyPrevious).toBeUndefined();
    for (const [env, why] of [
      [{ UNSTUCK_APPROVAL_KEY: key, UNSTUCK_APPROVAL_KEY_PREVIOUS: "short-old-secret" }, /32 bytes/],
      [{ UNSTUCK_APPROVAL_KEY: key, UNSTUCK_APPROVAL_KEY_PREVIOUS: key }, /same key as UNSTUCK_APPROVAL_KEY/],
      [{ UNSTUCK_APPROVAL_KEY_PREVIOUS: previous }, /UNSTUCK_APPROVAL_KEY, which is not set/],
    ] as const) {
      const err = configError(() => loadConfig(env));
      expect(err.code).toBe(ErrorCode.Config);
      expect(err.details.variable).toBe("UNSTUCK_APPROVAL_KEY_PREVIOUS");
      expect(err.message).toMatch(why);
      expect(err.message).not.toContain(key);
      expect(err.message).not.toContain(previous);
      expect(err.message).not.toContain("short-old-secret");
    }
  });
});

describe("Redis Cluster (REDIS_URL=redis+cluster://…)", () => {
  const NODES = "redis+cluster://10.0.0.1:6379,10.0.0.2:6380,[::1]:7000";

  it("reads the seed nodes, TLS and AUTH; a single Redis has no cluster target", () => {
    const c = loadConfig({ REDIS_URL: NODES, UNSTUCK_REDIS_PREFIX: "{unstuck}" });
    expect(c.redisCluster).toEqual({
      nodes: [
        { host: "10.0.0.1", port: 6379 },
        { host: "10.0.0.2", port: 6380 },
        { host: "::1", port: 7000 },
      ],
      tls: false,
    });
    const tls = loadConfig({
      REDIS_URL: "rediss+cluster://bot:p%40ss%2Cword@cfg.example.cache.amazonaws.com:6379",
      UNSTUCK_REDIS_PREFIX: "{unstuck}",
    });
    expect(tls.redisCluster).toEqual({
      nodes: [{ host: "cfg.example.cache.amazonaws.com", port: 6379 }],
      tls: true,
      username: "bot",
      password: "p@ss,word",
    });
    expect(loadConfig({ REDIS_URL: "redis://127.0.0.1:6379" }).redisCluster).toBeUndefined();
  });

  it("defaults the prefix to the hash-tagged {unstuck} on a cluster and keeps unstuck on one Redis", () => {
    expect(loadConfig({ REDIS_URL: NODES }).redisPrefix).toBe("{unstuck}");
    expect(loadConfig({}).redisPrefix).toBe("unstuck");
    expect(loadConfig({ REDIS_URL: NODES, UNSTUCK_REDIS_PREFIX: "team-a:{unstuck}" }).redisPrefix).toBe(
      "team-a:{unstuck}",
    );
  });

  it.each(["unstuck", "{}unstuck", "unstuck}{"])(
    "refuses the prefix %s without a hash tag, naming the variable and the fix",
    (prefix) => {
      const err = configError(() => loadConfig({ REDIS_URL: NODES, UNSTUCK_REDIS_PREFIX: prefix }));
      expect(err.code).toBe(ErrorCode.Config);
      expect(err.details).toEqual({ variable: "UNSTUCK_REDIS_PREFIX" });
      expect(err.message).toContain("no hash tag");
      expect(err.message).toContain("set UNSTUCK_REDIS_PREFIX={unstuck}");
    },
  );

  it.each([
    "redis+cluster://",
    "redis+cluster://10.0.0.1",
    "redis+cluster://10.0.0.1:6379/0",
    "redis+cluster://10.0.0.1:99999",
  ])("refuses %s naming REDIS_URL, without echoing a password", (url) => {
    const err = configError(() => loadConfig({ REDIS_URL: url, UNSTUCK_REDIS_PREFIX: "{u}" }));
    expect(err.code).toBe(ErrorCode.Config);
    expect(err.details).toEqual({ variable: "REDIS_URL" });
    expect(err.message).toContain("redis+cluster://[user:password@]host:port,host:port");
  });

  it("never puts the AUTH password in an error", () => {
    const err = configError(() => loadConfig({ REDIS_URL: "redis+cluster://:s3cret-token@10.0.0.1" }));
    expect(err.message).not.toContain("s3cret-token");
  });

  it("takes a private CA only with TLS", () => {
    const pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    const c = loadConfig(
      { REDIS_URL: "rediss+cluster://10.0.0.1:6379", REDIS_TLS_CA_FILE: "/ca.pem" },
      () => pem,
    );
    expect(c.redisTlsCa).toBe(pem);
    const err = configError(() => loadConfig({ REDIS_URL: NODES, REDIS_TLS_CA_FILE: "/ca.pem" }, () => pem));
    expect(err.details).toEqual({ variable: "REDIS_TLS_CA_FILE" });
  });
});
