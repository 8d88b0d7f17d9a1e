/**
 * One test world: the fake Slack, the simulators a test asks for (a Kubernetes API simulator, or the
 * whole simulated world — Kubernetes, AWS, DNS, HTTP front — from a scenario), and the bot's runtime
 * built from a config `botEnv` makes (the test Redis from `REDIS_URL`, a unique key prefix, this test
 * process's keys), started. `stop()` tears it all down in order: the runtimes (last booted first),
 * the test's Redis keys, the AWS clients, the fake Slack, the simulators. Pieces a test passes in
 * (a shared fake Slack or simulator) are left running for it to stop.
 */
import { pino } from "pino";
import type { Redis } from "ioredis";
import { createAwsClients, destroyAwsClients, type AwsClients } from "../../src/aws/clients.js";
import { createAwsAdapter } from "../../src/aws/sdk-adapter.js";
import { loadConfig, type Config } from "../../src/config.js";
import { createKubeAdapter } from "../../src/kube/client-node-adapter.js";
import type { Logger } from "../../src/log.js";
import { createRuntime, type Runtime, type RuntimeOptions } from "../../src/runtime.js";
import { startKubeSim, type KubeSim, type KubeSimOptions } from "../sim/kube/index.js";
import { startFakeSlack, type FakeSlack } from "../sim/slack/index.js";
import {
  startWorld as startSimWorld,
  type World as SimWorld,
  type WorldOptions as SimWorldOptions,
} from "../sim/world.js";
import { keyEnv } from "./keys.js";
import { client, deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "./redis.js";

// ---------------------------------------------------------------------------------------------
// The bot's environment

export interface BotEnvBase {
  readonly token: string;
  readonly secret: string;
  /** The fake Slack's Web API URL. */
  readonly slackUrl: string;
  /** Redis key prefix of this test (unique per test). */
  readonly prefix: string;
}

function roleOf(role: string | undefined): "all" | "bot" | "worker" {
  return role === "bot" || role === "worker" ? role : "all";
}

/** `loadConfig` input for a bot under test; `extra` adds or overrides variables. */
export function botEnv(
  base: BotEnvBase,
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  return {
    SLACK_BOT_TOKEN: base.token,
    SLACK_SIGNING_SECRET: base.secret,
    SLACK_API_URL: base.slackUrl,
    PORT: "0",
    REDIS_URL,
    UNSTUCK_REDIS_PREFIX: base.prefix,
    ...keyEnv(roleOf(extra["UNSTUCK_ROLE"])),
    ...extra,
  };
}

/** SDK clients on a simulated AWS account (the world's `aws.url`), with the bot's test credentials. */
export function simAwsClients(endpoint: string, maxAttempts: number): AwsClients {
  return createAwsClients({
    region: "ap-northeast-2",
    endpoint,
    credentials: { accessKeyId: "AKIAUNSTUCKTEST00001", secretAccessKey: "x" },
    maxAttempts,
  });
}

// ---------------------------------------------------------------------------------------------
// One runtime

/** The services a test hands the runtime instead of those it would build from the config. */
export type RuntimeServices = NonNullable<RuntimeOptions["services"]>;
/** Runtime options besides the config, log and services (shorter timings, the fleet's heartbeat…). */
export type RuntimeTuning = Omit<RuntimeOptions, "config" | "log" | "services">;

export interface BootedRuntime {
  readonly runtime: Runtime;
  readonly config: Config;
  /** Its Slack request URL (`/slack/events` on the port it listens on); "" when it listens on none. */
  readonly events: string;
  /** The HTTP port it listens on (a bot or `all` in HTTP mode), once started. */
  readonly port?: number;
}

/**
 * `createRuntime` with a silent log (unless given), the wall clock beside the given `services` (none
 * given: the runtime builds its own from the config), then started unless `start: false`.
 */
export async function bootRuntime(options: {
  readonly config: Config;
  readonly services?: Omit<RuntimeServices, "now" | "log"> & Partial<Pick<RuntimeServices, "now" | "log">>;
  readonly runtime?: RuntimeTuning;
  readonly log?: Logger;
  readonly start?: boolean;
}): Promise<BootedRuntime> {
  const log = options.log ?? pino({ level: "silent" });
  const runtime = await createRuntime({
    config: options.config,
    log,
    ...(options.services !== undefined
      ? { services: { now: () => new Date(), log, ...options.services } }
      : {}),
    ...options.runtime,
  });
  if (options.start === false) return { runtime, config: options.config, events: "" };
  const { port } = await runtime.start();
  return {
    runtime,
    config: options.config,
    events: port !== undefined ? `http://127.0.0.1:${String(port)}/slack/events` : "",
    ...(port !== undefined ? { port } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// The world

/** How one runtime of a world is built. */
export interface BootOptions {
  /** `UNSTUCK_ROLE` (default: the env's, else `all`); a worker gets no signing secret. */
  readonly role?: "all" | "bot" | "worker";
  /** Further variables for `botEnv` (they override the world's `env`). */
  readonly env?: Readonly<Record<string, string>>;
  /** The config to use instead of the one `botEnv` makes (a fleet's, read from its own env). */
  readonly config?: Config;
  /** Services instead of the world's (by default: its simulators' kube, and AWS with `sim`). */
  readonly services?: Partial<RuntimeServices>;
  /** `false`: the runtime builds its services from the config (`KUBECONFIG`, …). */
  readonly simServices?: boolean;
  /** Runtime options (fleet heartbeat, notify retries, shorter timings…). */
  readonly runtime?: RuntimeTuning;
  readonly log?: Logger;
  /** `false`: built, not started (no HTTP, no workers). */
  readonly start?: boolean;
}

/** A runtime of a world; `stop()` stops it now and takes it off the world's list. */
export interface WorldRuntime extends BootedRuntime {
  stop(): Promise<void>;
}

export interface WorldOptions extends BootOptions {
  /** Label of the Redis key prefix (`test-<label>-<hex>`), or `prefix` itself. */
  readonly label?: string;
  readonly prefix?: string;
  readonly token?: string;
  readonly secret?: string;
  /** An already running fake Slack (the caller stops it). */
  readonly slack?: FakeSlack;
  /** A Kubernetes API simulator: started with these options, or one already running (the caller stops it). */
  readonly kube?: KubeSimOptions | KubeSim;
  /**
   * The whole simulated world (`test/sim/world.ts`), started with these options: the bot gets its AWS
   * env, its DNS server and HTTP front (`UNSTUCK_DNS_RESOLVERS`, `UNSTUCK_HTTP_PROBE_VIA`).
   */
  readonly sim?: SimWorldOptions;
  /** Attempts of the AWS SDK clients on the simulated account (default 1). */
  readonly awsMaxAttempts?: number;
  /** `false`: boot no runtime now (`world.boot()` does, later). */
  readonly boot?: boolean;
}

export interface TestWorld {
  readonly fake: FakeSlack;
  readonly token: string;
  readonly secret: string;
  readonly prefix: string;
  /** A plain connection to the test Redis (reads, cleanup). */
  readonly redis: Redis;
  /** The Kubernetes simulator (the simulated world's, with `sim`). */
  readonly kube?: KubeSim;
  readonly sim?: SimWorld;
  /** SDK clients on the simulated AWS account (with `sim`). */
  readonly aws?: AwsClients;
  /** The first runtime booted (throws if none was). */
  readonly runtime: Runtime;
  /** Its Slack request URL ("" when it listens on none). */
  readonly events: string;
  readonly config: Config;
  /** The `botEnv` variables of a runtime built with `options` (the world's env and options first). */
  env(options?: Pick<BootOptions, "role" | "env">): Record<string, string>;
  /**
   * One more runtime on the same world (same Slack, simulators, Redis prefix), stopped with it — or
   * before, by its `stop()` (not the runtime's own, which the world would call again).
   */
  boot(options?: BootOptions): Promise<WorldRuntime>;
  stop(): Promise<void>;
}

function isKubeSim(kube: KubeSimOptions | KubeSim): kube is KubeSim {
  return typeof (kube as Partial<KubeSim>).kubeconfig === "function";
}

/** Start a world as `options` say; see the file's comment. */
export async function startTestWorld(options: WorldOptions = {}): Promise<TestWorld> {
  const token = options.token ?? "xoxb-test-world-token";
  const secret = options.secret ?? "test-world-signing-secret";
  const prefix = options.prefix ?? uniquePrefix(options.label ?? "world");
  const teardown: (() => Promise<void> | void)[] = [];
  const stopAll = async (): Promise<void> => {
    while (teardown.length > 0) await teardown.pop()?.();
  };
  try {
    let sim: SimWorld | undefined;
    let kube: KubeSim | undefined;
    if (options.sim !== undefined) {
      const started = await startSimWorld(options.sim);
      teardown.push(() => started.stop());
      sim = started;
      kube = started.kube;
    } else if (options.kube !== undefined) {
      if (isKubeSim(options.kube)) kube = options.kube;
      else {
        const started = await startKubeSim(options.kube);
        teardown.push(() => started.stop());
        kube = started;
      }
    }
    let fake = options.slack;
    if (fake === undefined) {
      const started = await startFakeSlack({ token });
      teardown.push(() => started.stop());
      fake = started;
    }
    let aws: AwsClients | undefined;
    if (sim !== undefined) {
      const clients = simAwsClients(sim.aws.url, options.awsMaxAttempts ?? 1);
      teardown.push(() => destroyAwsClients(clients));
      aws = clients;
    }
    const redis = client();
    teardown.push(async () => {
      await deleteKeysWithPrefix(redis, prefix);
      await redis.quit();
    });
    const runtimes: Runtime[] = [];
    teardown.push(async () => {
      while (runtimes.length > 0) await runtimes.pop()?.stop();
    });

    const slackUrl = fake.url;
    const env = (o: Pick<BootOptions, "role" | "env"> = {}): Record<string, string> => {
      const role = o.role ?? options.role;
      return botEnv(
        { token, secret, slackUrl, prefix },
        {
          ...(sim !== undefined
            ? {
                ...sim.aws.env(),
                UNSTUCK_DNS_RESOLVERS: sim.dns.address,
                UNSTUCK_HTTP_PROBE_VIA: sim.httpFront.url,
              }
            : {}),
          ...(role !== undefined ? { UNSTUCK_ROLE: role } : {}),
          // A worker needs no signing secret: it receives nothing from Slack.
          ...(role === "worker" ? { SLACK_SIGNING_SECRET: "" } : {}),
          ...options.env,
          ...o.env,
        },
      );
    };
    const boot = async (o: BootOptions = {}): Promise<WorldRuntime> => {
      const config = o.config ?? loadConfig(env(o));
      const simServices = o.simServices ?? options.simServices ?? true;
      const own: Partial<RuntimeServices> = simServices
        ? {
            ...(kube !== undefined ? { kube: createKubeAdapter(kube.kubeconfig()) } : {}),
            ...(aws !== undefined ? { aws: { port: createAwsAdapter(aws), cluster: "prod-eks" } } : {}),
          }
        : {};
      const services = { ...own, ...options.services, ...o.services };
      const runtime = o.runtime ?? options.runtime;
      const log = o.log ?? options.log;
      const start = o.start ?? options.start;
      const booted = await bootRuntime({
        config,
        ...(services.kube !== undefined ? { services: { ...services, kube: services.kube } } : {}),
        ...(runtime !== undefined ? { runtime } : {}),
        ...(log !== undefined ? { log } : {}),
        ...(start !== undefined ? { start } : {}),
      });
      runtimes.push(booted.runtime);
      return {
        ...booted,
        async stop() {
          const at = runtimes.indexOf(booted.runtime);
          if (at < 0) return;
          runtimes.splice(at, 1);
          await booted.runtime.stop();
        },
      };
    };
    const first = options.boot === false ? undefined : await boot();
    const need = <T>(value: T | undefined): T => {
      if (value === undefined) throw new Error("this world booted no runtime (boot: false)");
      return value;
    };
    return {
      fake,
      token,
      secret,
      prefix,
      redis,
      ...(kube !== undefined ? { kube } : {}),
      ...(sim !== undefined ? { sim } : {}),
      ...(aws !== undefined ? { aws } : {}),
      get runtime() {
        return need(first).runtime;
      },
      get events() {
        return need(first).events;
      },
      get config() {
        return need(first).config;
      },
      env,
      boot,
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
