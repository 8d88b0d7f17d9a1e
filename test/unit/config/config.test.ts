import { describe, expect, it } from "vitest";
import { LOCAL_CLUSTER, loadConfig } from "../../../src/config.js";
import { BOT, clusterOwner, generateKeyText } from "../../../src/trust/keys.js";
import { processKeys } from "../../../src/trust/process-keys.js";
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

  it("takes DNS resolvers as addresses with or without a port", () => {
    const servers = "10.0.0.2, 10.0.0.3:5353 fd00::2 [fd00::3]:53";
    expect(loadConfig({ UNSTUCK_DNS_RESOLVERS: servers }).edgeProbe.resolvers).toEqual([
      "10.0.0.2",
      "10.0.0.3:5353",
      "fd00::2",
      "[fd00::3]:53",
    ]);
  });

  it.each([
    ["PORT", "http"],
    ["SLACK_API_URL", "not a url"],
    ["UNSTUCK_APPROVALS_REQUIRED", "0"],
    ["UNSTUCK_REQUEST_TTL_SECONDS", "5"],
    ["UNSTUCK_CLUSTER_NAME", "bad name!"],
    ["UNSTUCK_APPROVAL_KEY", "x".repeat(31)],
    ["UNSTUCK_DNS_RESOLVERS", "10.0.0.2, dns.internal"],
    ["UNSTUCK_DNS_RESOLVERS", "10.0.0.2:99999"],
    ["UNSTUCK_DNS_RESOLVERS", "10.0.0.256"],
    ["UNSTUCK_DNS_RESOLVERS", "[fd00::zz]:53"],
  ])("names %s when its value is invalid (%s)", (variable, value) => {
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

  it("UNSTUCK_APPROVAL_KEY: the shared key of before Ed25519, on the bot only, never part of an error message", () => {
    const key = "legacy-approval-key-0123456789abcdef0123456789";
    expect(loadConfig({ UNSTUCK_APPROVAL_KEY: key }).legacyApprovalKey).toBe(key);
    const short = configError(() => loadConfig({ UNSTUCK_APPROVAL_KEY: "short-secret" }));
    expect(short.message).toMatch(/UNSTUCK_APPROVAL_KEY.*32 bytes/);
    expect(short.message).not.toContain("short-secret");
    const onWorker = configError(() => loadConfig({ UNSTUCK_APPROVAL_KEY: key, UNSTUCK_ROLE: "worker" }));
    expect(onWorker.details.variable).toBe("UNSTUCK_APPROVAL_KEY");
    expect(onWorker.message).toMatch(/workers hold no shared key/);
    expect(onWorker.message).not.toContain(key);
  });
});

describe("signing keys (processKeys by role)", () => {
  const bot = generateKeyText();
  const worker = generateKeyText();
  const all = {
    UNSTUCK_BOT_SIGNING_KEY: bot.privateKey,
    UNSTUCK_BOT_PUBLIC_KEYS: bot.publicKey,
    UNSTUCK_WORKER_SIGNING_KEY: worker.privateKey,
    UNSTUCK_WORKER_PUBLIC_KEYS: worker.publicKey,
  };

  it("each role holds only its own private key and verifies with every public key", () => {
    const both = processKeys(loadConfig(all), "all");
    expect([both.bot?.owner, both.worker?.owner]).toEqual([BOT, clusterOwner(LOCAL_CLUSTER)]);
    const b = processKeys(loadConfig({ ...all, UNSTUCK_WORKER_SIGNING_KEY: "", UNSTUCK_ROLE: "bot" }), "bot");
    expect(b.worker).toBeUndefined();
    expect(b.keyring.keyIdsOf(clusterOwner(LOCAL_CLUSTER))).toHaveLength(1);
    const w = processKeys(
      loadConfig({ ...all, UNSTUCK_BOT_SIGNING_KEY: "", UNSTUCK_ROLE: "worker" }),
      "worker",
    );
    expect(w.bot).toBeUndefined();
    expect(w.keyring.keyIdsOf(BOT)).toHaveLength(1);
  });

  it.each([
    [
      "a worker holding the bot's key",
      { ...all, UNSTUCK_ROLE: "worker" },
      "worker",
      "UNSTUCK_BOT_SIGNING_KEY",
      /only the Slack-facing bot may hold it/,
    ],
    [
      "the bot holding a worker's key",
      { ...all, UNSTUCK_ROLE: "bot" },
      "bot",
      "UNSTUCK_WORKER_SIGNING_KEY",
      /only a cluster's workers may hold it/,
    ],
    [
      "a bot without its key",
      { UNSTUCK_WORKER_PUBLIC_KEYS: worker.publicKey },
      "bot",
      "UNSTUCK_BOT_SIGNING_KEY",
      /not set/,
    ],
    [
      "a worker without its key",
      { UNSTUCK_BOT_PUBLIC_KEYS: bot.publicKey },
      "worker",
      "UNSTUCK_WORKER_SIGNING_KEY",
      /not set/,
    ],
    [
      "a worker without the bot's public key",
      { UNSTUCK_WORKER_SIGNING_KEY: worker.privateKey },
      "worker",
      "UNSTUCK_BOT_PUBLIC_KEYS",
      /not set/,
    ],
    [
      "a bot without the workers' public keys",
      { UNSTUCK_BOT_SIGNING_KEY: bot.privateKey },
      "bot",
      "UNSTUCK_WORKER_PUBLIC_KEYS",
      /not set/,
    ],
    [
      "a bot whose own key is not listed",
      { ...all, UNSTUCK_BOT_PUBLIC_KEYS: worker.publicKey, UNSTUCK_WORKER_SIGNING_KEY: undefined },
      "bot",
      "UNSTUCK_BOT_PUBLIC_KEYS",
      /does not list the public key/,
    ],
  ] as const)("refuses %s, naming the variable and no private key", (_what, env, role, variable, why) => {
    const err = configError(() => processKeys(loadConfig(env), role));
    expect(err.code).toBe(ErrorCode.Config);
    expect(err.details.variable).toBe(variable);
    expect(err.message).toMatch(why);
    expect(err.message).not.toContain(bot.privateKey);
    expect(err.message).not.toContain(worker.privateKey);
  });

  it("a fleet: each cluster's public keys from the clusters file; a worker whose key its cluster does not list is refused", () => {
    const c2 = generateKeyText();
    const file = `clusters:\n  c1: { region: eu-west-1, publicKeys: [${worker.publicKey}] }\n  c2: { region: eu-west-1, publicKeys: [${c2.publicKey}] }\n`;
    const base = { UNSTUCK_CLUSTERS_FILE: "/c.yaml", UNSTUCK_BOT_PUBLIC_KEYS: bot.publicKey };
    const w = processKeys(
      loadConfig(
        {
          ...base,
          UNSTUCK_ROLE: "worker",
          UNSTUCK_CLUSTER_NAME: "c1",
          UNSTUCK_WORKER_SIGNING_KEY: worker.privateKey,
        },
        () => file,
      ),
      "worker",
    );
    expect(w.worker?.owner).toEqual(clusterOwner("c1"));
    expect(w.keyring.keyIdsOf(clusterOwner("c2"))).toHaveLength(1);
    const wrong = configError(() =>
      processKeys(
        loadConfig(
          {
            ...base,
            UNSTUCK_ROLE: "worker",
            UNSTUCK_CLUSTER_NAME: "c2",
            UNSTUCK_WORKER_SIGNING_KEY: worker.privateKey,
          },
          () => file,
        ),
        "worker",
      ),
    );
    expect(wrong.message).toMatch(/lists no public key of cluster c2 matching UNSTUCK_WORKER_SIGNING_KEY/);
    const noKeys = configError(() =>
      processKeys(
        loadConfig({ ...base, UNSTUCK_ROLE: "bot", UNSTUCK_BOT_SIGNING_KEY: bot.privateKey }, () =>
          file.replace(`, publicKeys: [${c2.publicKey}]`, ""),
        ),
        "bot",
      ),
    );
    expect(noKeys.message).toMatch(/lists no publicKeys for c2/);
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
