/**
 * Where Redis is, from `REDIS_URL` and its neighbours: a Redis Cluster's seed nodes, a Sentinel
 * group's sentinels and master, the CA of a TLS Redis, and the key prefix a cluster needs.
 */
import { ErrorCode, UnstuckError } from "../errors.js";
import type { Env } from "./env.js";

/** A Redis Cluster (`REDIS_URL=redis+cluster://[user:password@]host:port,host:port…`). */
export interface RedisClusterTarget {
  /** Seed nodes; the client learns the others from them. */
  readonly nodes: readonly { readonly host: string; readonly port: number }[];
  /** `rediss+cluster://`: TLS to every node. */
  readonly tls: boolean;
  readonly username?: string;
  /** AUTH; never logged. */
  readonly password?: string;
}

/**
 * A Redis behind Sentinel (`REDIS_URL=redis+sentinel://[user:password@]host:port,host:port…/master`):
 * the client asks the sentinels for the master's address, and again after a failover.
 */
export interface RedisSentinelTarget {
  /** The sentinels (port 26379 when the URL names none). */
  readonly sentinels: readonly { readonly host: string; readonly port: number }[];
  /** The master group name the sentinels monitor (`sentinel monitor <name> …`). */
  readonly masterName: string;
  /** `?db=N`; default 0. */
  readonly db?: number;
  /** `rediss+sentinel://`: TLS to the sentinels and to the master. */
  readonly tls: boolean;
  /** AUTH for the master (and its replicas); never logged. */
  readonly username?: string;
  readonly password?: string;
  /** AUTH for the sentinels themselves (`?sentinelUsername=…&sentinelPassword=…`); never logged. */
  readonly sentinelUsername?: string;
  readonly sentinelPassword?: string;
}

/** `REDIS_TLS_CA_FILE` read and checked (PEM, with a `rediss://` URL to use it); `undefined` when unset. */
export function redisCa(e: Env, readFile: (path: string) => string): string | undefined {
  const file = e.REDIS_TLS_CA_FILE;
  if (file === undefined) return undefined;
  if (!e.REDIS_URL.startsWith("rediss")) {
    throw new UnstuckError(
      ErrorCode.Config,
      "REDIS_TLS_CA_FILE is set but REDIS_URL is not rediss:// (or rediss+cluster://, rediss+sentinel://): the CA would never be used; use rediss:// for TLS.",
      { variable: "REDIS_TLS_CA_FILE" },
    );
  }
  let pem: string;
  try {
    pem = readFile(file);
  } catch (err) {
    throw new UnstuckError(
      ErrorCode.Config,
      `Invalid REDIS_TLS_CA_FILE: cannot read ${file} (${err instanceof Error ? err.message : String(err)}).`,
      { variable: "REDIS_TLS_CA_FILE" },
    );
  }
  if (!pem.includes("-----BEGIN CERTIFICATE-----")) {
    throw new UnstuckError(ErrorCode.Config, `Invalid REDIS_TLS_CA_FILE: ${file} holds no PEM certificate.`, {
      variable: "REDIS_TLS_CA_FILE",
    });
  }
  return pem;
}

/**
 * `redis+cluster://[user:password@]host:port[,host:port…]` (or `rediss+cluster://` for TLS): the
 * seed nodes of a Redis Cluster and the AUTH every node takes.
 */
export function parseRedisClusterUrl(url: string): RedisClusterTarget {
  const invalid = (why: string): UnstuckError =>
    new UnstuckError(
      ErrorCode.Config,
      `Invalid REDIS_URL: ${why} (a Redis Cluster is redis+cluster://[user:password@]host:port,host:port…, rediss+cluster:// for TLS).`,
      { variable: "REDIS_URL" },
    );
  const match = /^(rediss?)\+cluster:\/\/(.*)$/.exec(url);
  if (!match) throw invalid("not a cluster URL");
  let rest = match[2] ?? "";
  const at = rest.lastIndexOf("@");
  let username: string | undefined;
  let password: string | undefined;
  if (at >= 0) {
    const userinfo = rest.slice(0, at);
    rest = rest.slice(at + 1);
    const colon = userinfo.indexOf(":");
    const user = decodeURIComponent(colon >= 0 ? userinfo.slice(0, colon) : userinfo);
    const pass = colon >= 0 ? decodeURIComponent(userinfo.slice(colon + 1)) : "";
    // As ioredis reads redis://user:password@host: an empty user is the default user.
    if (user !== "") username = user;
    if (pass !== "") password = pass;
  }
  rest = rest.replace(/\/$/, "");
  if (rest.includes("/") || rest.includes("?")) throw invalid("a cluster has no database number or options");
  const nodes = rest.split(",").map((node) => {
    const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(node.trim());
    const port = Number(m?.[2]);
    if (!m?.[1] || !(port > 0 && port < 65536)) throw invalid(`"${node}" is not host:port`);
    return { host: m[1].replace(/^\[(.*)\]$/, "$1"), port };
  });
  return {
    nodes,
    tls: match[1] === "rediss",
    ...(username !== undefined ? { username } : {}),
    ...(password !== undefined ? { password } : {}),
  };
}

/** `user:password` of a Redis URL, decoded; an empty user is the default user (as ioredis reads it). */
function redisUserinfo(userinfo: string): { username?: string; password?: string } {
  const colon = userinfo.indexOf(":");
  const user = decodeURIComponent(colon >= 0 ? userinfo.slice(0, colon) : userinfo);
  const pass = colon >= 0 ? decodeURIComponent(userinfo.slice(colon + 1)) : "";
  return { ...(user !== "" ? { username: user } : {}), ...(pass !== "" ? { password: pass } : {}) };
}

/** The options a Sentinel URL takes after `?`. */
const SENTINEL_OPTIONS = ["db", "sentinelUsername", "sentinelPassword"] as const;

/**
 * `redis+sentinel://[user:password@]host[:port][,host[:port]…]/<masterName>[?db=N&sentinelUsername=…&sentinelPassword=…]`
 * (or `rediss+sentinel://` for TLS to the sentinels and the master): the sentinels, the master group
 * they monitor, the master's AUTH (user info) and the sentinels' own (query). Port default 26379.
 */
export function parseRedisSentinelUrl(url: string): RedisSentinelTarget {
  const invalid = (why: string): UnstuckError =>
    new UnstuckError(
      ErrorCode.Config,
      `Invalid REDIS_URL: ${why} (Redis Sentinel is redis+sentinel://[user:password@]host:26379,host:26379/<masterName>[?db=0&sentinelPassword=…], rediss+sentinel:// for TLS).`,
      { variable: "REDIS_URL" },
    );
  const match = /^(rediss?)\+sentinel:\/\/([^/?#]*)(?:\/([^?#]*))?(?:\?([^#]*))?$/.exec(url);
  if (!match) throw invalid("not a Sentinel URL");
  let hosts = match[2] ?? "";
  const at = hosts.lastIndexOf("@");
  let auth: { username?: string; password?: string } = {};
  if (at >= 0) {
    try {
      auth = redisUserinfo(hosts.slice(0, at));
    } catch {
      throw invalid("the user or password is not valid percent-encoding");
    }
    hosts = hosts.slice(at + 1);
  }
  if (hosts === "") throw invalid("no sentinel host");
  const sentinels = hosts.split(",").map((node) => {
    const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(node.trim());
    const port = m?.[2] !== undefined ? Number(m[2]) : 26379;
    if (!m?.[1] || !(port > 0 && port < 65536)) throw invalid(`"${node}" is not host or host:port`);
    return { host: m[1].replace(/^\[(.*)\]$/, "$1"), port };
  });
  let masterName: string;
  try {
    masterName = decodeURIComponent((match[3] ?? "").replace(/\/$/, ""));
  } catch {
    throw invalid("the master name is not valid percent-encoding");
  }
  if (masterName === "") throw invalid("no master name after the sentinels (…:26379/mymaster)");
  if (masterName.includes("/")) throw invalid(`"${masterName}" is not one master name`);
  const query = new URLSearchParams(match[4] ?? "");
  for (const key of new Set(query.keys())) {
    if (!(SENTINEL_OPTIONS as readonly string[]).includes(key)) {
      throw invalid(`unknown option "${key}" (known: ${SENTINEL_OPTIONS.join(", ")})`);
    }
    if (query.getAll(key).length > 1) throw invalid(`option "${key}" given twice`);
  }
  const dbText = query.get("db");
  const db = dbText !== null ? Number(dbText) : undefined;
  if (dbText !== null && !/^\d{1,5}$/.test(dbText)) {
    throw invalid(`db "${dbText}" is not a database number`);
  }
  const sentinelUsername = query.get("sentinelUsername") ?? "";
  const sentinelPassword = query.get("sentinelPassword") ?? "";
  return {
    sentinels,
    masterName,
    ...(db !== undefined ? { db } : {}),
    tls: match[1] === "rediss",
    ...auth,
    ...(sentinelUsername !== "" ? { sentinelUsername } : {}),
    ...(sentinelPassword !== "" ? { sentinelPassword } : {}),
  };
}

/**
 * On a Redis Cluster a Lua script or a BullMQ queue may only touch keys of one slot: the prefix must
 * hold a hash tag (`{…}`), so every key of the bot hashes by it. Unset, the cluster default is `{unstuck}`.
 */
export function redisKeyPrefix(prefix: string | undefined, cluster: boolean): string {
  if (!cluster) return prefix ?? "unstuck";
  if (prefix === undefined) return "{unstuck}";
  if (!/^[^{]*\{[^}]+\}/.test(prefix)) {
    throw new UnstuckError(
      ErrorCode.Config,
      `Invalid UNSTUCK_REDIS_PREFIX: "${prefix}" has no hash tag, and on a Redis Cluster (REDIS_URL redis+cluster://) every key of the bot must hash to one slot; set UNSTUCK_REDIS_PREFIX={${prefix.replace(/[{}]/g, "") || "unstuck"}}.`,
      { variable: "UNSTUCK_REDIS_PREFIX" },
    );
  }
  return prefix;
}
