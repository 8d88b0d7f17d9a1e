/**
 * `REDIS_URL=redis+sentinel://…`: the sentinels, the master group's name, the database and the AUTH
 * of each side, read into `config.redisSentinel`; a bad URL is an error naming REDIS_URL; and the
 * ioredis options the one builder makes of it (`sentinelOptions`), which every connection uses.
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config.js";
import { parseRedisSentinelUrl } from "../../../src/config/redis.js";
import { ErrorCode, UnstuckError } from "../../../src/errors.js";
import { sentinelOptions } from "../../../src/redis-connection.js";
import { REDIS_URL } from "../../helpers/redis.js";

function configError(fn: () => unknown): UnstuckError {
  try {
    fn();
  } catch (err) {
    if (err instanceof UnstuckError) return err;
    throw err;
  }
  throw new Error("expected a config error");
}

const PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

describe("parseRedisSentinelUrl", () => {
  it("reads sentinels, master name, db and both AUTHs, percent-decoded", () => {
    expect(
      parseRedisSentinelUrl(
        "redis+sentinel://app:p%40ss%3Aword@s1.example:26379,10.0.0.2:26380,[fd00::1]:26381/my%20master?db=3&sentinelUsername=sen&sentinelPassword=s%26cret",
      ),
    ).toEqual({
      sentinels: [
        { host: "s1.example", port: 26379 },
        { host: "10.0.0.2", port: 26380 },
        { host: "fd00::1", port: 26381 },
      ],
      masterName: "my master",
      db: 3,
      tls: false,
      username: "app",
      password: "p@ss:word",
      sentinelUsername: "sen",
      sentinelPassword: "s&cret",
    });
  });

  it("defaults: port 26379, no db, a password without a user is the default user's, TLS from rediss+", () => {
    expect(parseRedisSentinelUrl("rediss+sentinel://:secret@sentinel-a,sentinel-b/mymaster/")).toEqual({
      sentinels: [
        { host: "sentinel-a", port: 26379 },
        { host: "sentinel-b", port: 26379 },
      ],
      masterName: "mymaster",
      tls: true,
      password: "secret",
    });
  });

  it.each([
    ["redis+sentinel://s1:26379", "no master name"],
    ["redis+sentinel://s1:26379/", "no master name"],
    ["redis+sentinel:///mymaster", "no sentinel host"],
    ["redis+sentinel://s1:0/mymaster", `"s1:0" is not host or host:port`],
    ["redis+sentinel://s1:99999/mymaster", `"s1:99999" is not host or host:port`],
    ["redis+sentinel://s1:26379,/mymaster", `"" is not host or host:port`],
    ["redis+sentinel://s1/a/b", `"a/b" is not one master name`],
    ["redis+sentinel://s1/m?db=x", `db "x" is not a database number`],
    ["redis+sentinel://s1/m?db=-1", `db "-1" is not a database number`],
    ["redis+sentinel://s1/m?password=x", `unknown option "password"`],
    ["redis+sentinel://s1/m?db=1&db=2", `option "db" given twice`],
    ["redis+sentinel://u:%zz@s1/m", "the user or password is not valid percent-encoding"],
    ["redis+cluster://s1/m", "not a Sentinel URL"],
  ])("%s: %s", (url, why) => {
    const err = configError(() => parseRedisSentinelUrl(url));
    expect(err.code).toBe(ErrorCode.Config);
    expect(err.details.variable).toBe("REDIS_URL");
    expect(err.message).toContain(`Invalid REDIS_URL: ${why}`);
    expect(err.message).toContain("redis+sentinel://[user:password@]host:26379,host:26379/<masterName>");
  });
});

describe("loadConfig with a Sentinel REDIS_URL", () => {
  it("sets redisSentinel (and no cluster); the prefix needs no hash tag", () => {
    const c = loadConfig({ REDIS_URL: "redis+sentinel://s1:26379,s2:26379/mymaster?db=1" });
    expect(c.redisSentinel?.masterName).toBe("mymaster");
    expect(c.redisSentinel?.db).toBe(1);
    expect(c.redisCluster).toBeUndefined();
    expect(c.redisPrefix).toBe("unstuck");
    expect(loadConfig({ REDIS_URL }).redisSentinel).toBeUndefined();
  });

  it("a bad Sentinel URL fails loadConfig naming REDIS_URL", () => {
    const err = configError(() => loadConfig({ REDIS_URL: "redis+sentinel://s1:26379" }));
    expect(err.details.variable).toBe("REDIS_URL");
    expect(err.message).toMatch(/^Invalid REDIS_URL: no master name/);
  });

  it("an unknown scheme names the Sentinel form among those accepted", () => {
    const err = configError(() => loadConfig({ REDIS_URL: "sentinel://s1/m" }));
    expect(err.details.variable).toBe("REDIS_URL");
    expect(err.message).toContain("redis+sentinel://");
  });

  it("REDIS_TLS_CA_FILE goes with rediss+sentinel:// and is refused with redis+sentinel://", () => {
    const tls = loadConfig({ REDIS_URL: "rediss+sentinel://s1/m", REDIS_TLS_CA_FILE: "/ca.pem" }, () => PEM);
    expect(tls.redisTlsCa).toBe(PEM);
    const err = configError(() =>
      loadConfig({ REDIS_URL: "redis+sentinel://s1/m", REDIS_TLS_CA_FILE: "/ca.pem" }, () => PEM),
    );
    expect(err.details.variable).toBe("REDIS_TLS_CA_FILE");
  });
});

describe("sentinelOptions", () => {
  it("the URL's parts become ioredis' sentinel options, AUTH on both sides", () => {
    const c = loadConfig({
      REDIS_URL: "redis+sentinel://app:pw@s1:26379,s2:26380/mymaster?db=4&sentinelPassword=sp",
    });
    const o = sentinelOptions(
      c,
      { lazyConnect: true, maxRetriesPerRequest: null },
      { maxRetriesPerRequest: null },
    );
    expect(o).toMatchObject({
      sentinels: [
        { host: "s1", port: 26379 },
        { host: "s2", port: 26380 },
      ],
      name: "mymaster",
      db: 4,
      username: "app",
      password: "pw",
      sentinelPassword: "sp",
      failoverDetector: true,
      lazyConnect: true,
      maxRetriesPerRequest: null,
    });
    expect(o.tls).toBeUndefined();
    expect(o.enableTLSForSentinelMode).toBeUndefined();
  });

  it("rediss+sentinel://: TLS to the master and the sentinels, with REDIS_TLS_CA_FILE's CA", () => {
    const c = loadConfig({ REDIS_URL: "rediss+sentinel://s1/m", REDIS_TLS_CA_FILE: "/ca.pem" }, () => PEM);
    const o = sentinelOptions(c);
    expect(o.tls).toEqual({ ca: PEM });
    expect(o.sentinelTLS).toEqual({ ca: PEM });
    expect(o.enableTLSForSentinelMode).toBe(true);
  });

  it("one attempt (start-up checks, the CLI): no retry towards the master nor the sentinels", () => {
    const o = sentinelOptions(loadConfig({ REDIS_URL: "redis+sentinel://s1/m" }), { reconnect: false });
    expect(typeof o.retryStrategy === "function" ? o.retryStrategy(1) : "absent").toBeNull();
    expect(typeof o.sentinelRetryStrategy === "function" ? o.sentinelRetryStrategy(1) : "absent").toBeNull();
    expect(o.failoverDetector).toBe(false);
  });

  it("is only for a Sentinel URL", () => {
    expect(() => sentinelOptions(loadConfig({ REDIS_URL }))).toThrow(/not a redis\+sentinel:\/\/ URL/);
  });
});
