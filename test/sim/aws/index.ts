/**
 * The AWS account simulator: one local HTTP endpoint speaking ELBv2 (query), EC2 (ec2),
 * Route 53 and CloudFront (rest-xml), CloudTrail and the Resource Groups Tagging API (JSON 1.1),
 * STS (query) exactly enough for the real `aws` CLI and the SDK v3 clients, over an {@link AwsWorld}
 * that scenarios load — one per account: further accounts and the roles STS lets callers assume
 * are added with `accounts` / `roles` (`accounts.ts`).
 */
import type { AddressInfo } from "node:net";
import { AwsAccounts, type SimRole } from "./accounts.js";
import { loadAwsScenario } from "./scenario.js";
import { AwsEndpoint, type AwsCall, type AwsFaults } from "./server.js";
import { AwsWorld } from "./world.js";

export { AwsWorld } from "./world.js";
export type * from "./world.js";
export {
  ALB_HOSTED_ZONE_IDS,
  CLOUDFRONT_HOSTED_ZONE_ID,
  NLB_HOSTED_ZONE_IDS,
  elbHostedZoneId,
  fqdn,
} from "./world.js";
export { AwsApiError } from "./errors.js";
export { AwsAccounts, parseRoleArn, type SimRole, type SimSession } from "./accounts.js";
export {
  awsScenarioSchema,
  loadAwsScenario,
  parseAwsScenario,
  readAwsScenario,
  type AwsScenario,
} from "./scenario.js";
export { AwsService, type AwsCall, type AwsFaults } from "./server.js";

/** Dummy credentials the simulator hands out; any others work as well. */
export const SIM_ACCESS_KEY_ID = "AKIASIMULATOR0000001";
export const SIM_SECRET_ACCESS_KEY = "simulator-secret-key-not-verified";

/** A running simulator. */
export interface AwsSim {
  /** Base URL, e.g. `http://127.0.0.1:41234`: the endpoint for every service. */
  readonly url: string;
  /** The main account's world: what keys of no other account see. */
  readonly world: AwsWorld;
  /** Every account, the roles STS hands out and the sessions it handed out. */
  readonly accounts: AwsAccounts;
  /** Replaces the fault settings (an empty object clears them). */
  setFaults(f: AwsFaults): void;
  /** Every call so far, in order. */
  calls(): AwsCall[];
  resetCalls(): void;
  /** Environment for the `aws` CLI (or any SDK): endpoint, dummy credentials, region, no pager. */
  env(): Record<string, string>;
  stop(): Promise<void>;
}

/** Options for {@link startAwsSim}. */
export interface AwsSimOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** The scenario file's `aws:` section, or a whole parsed scenario object. */
  scenario?: unknown;
  /** A ready world instead of a scenario. */
  world?: AwsWorld;
  faults?: AwsFaults;
  now?: () => Date;
  /** How long a distribution stays `InProgress` after UpdateDistribution (default 0). */
  cloudFrontDeployMs?: number;
  /** How long a Route 53 change stays `PENDING` (default 0). */
  route53SyncMs?: number;
  /** Further accounts beside the main world, each a world with its own `accountId`. */
  accounts?: readonly AwsWorld[];
  /** Roles STS lets callers assume (in any of the accounts). */
  roles?: readonly SimRole[];
}

/** Starts the simulator on 127.0.0.1. */
export async function startAwsSim(options: AwsSimOptions = {}): Promise<AwsSim> {
  const worldOptions = {
    ...(options.now ? { now: options.now } : {}),
    ...(options.cloudFrontDeployMs !== undefined ? { cloudFrontDeployMs: options.cloudFrontDeployMs } : {}),
    ...(options.route53SyncMs !== undefined ? { route53SyncMs: options.route53SyncMs } : {}),
  };
  const world =
    options.world ??
    (options.scenario !== undefined
      ? loadAwsScenario(options.scenario, worldOptions)
      : new AwsWorld(worldOptions));
  const accounts = new AwsAccounts(world);
  for (const other of options.accounts ?? []) accounts.addAccount(other);
  for (const role of options.roles ?? []) accounts.addRole(role);
  const endpoint = new AwsEndpoint(world, accounts);
  if (options.faults) endpoint.setFaults(options.faults);
  await new Promise<void>((resolve, reject) => {
    endpoint.server.once("error", reject);
    endpoint.server.listen(options.port ?? 0, "127.0.0.1", () => {
      resolve();
    });
  });
  const { port } = endpoint.server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    world,
    accounts,
    setFaults: (f) => {
      endpoint.setFaults(f);
    },
    calls: () => endpoint.callLog.map((c) => ({ ...c })),
    resetCalls: () => {
      endpoint.callLog.length = 0;
    },
    env: () => ({
      AWS_ENDPOINT_URL: url,
      AWS_ACCESS_KEY_ID: SIM_ACCESS_KEY_ID,
      AWS_SECRET_ACCESS_KEY: SIM_SECRET_ACCESS_KEY,
      AWS_REGION: world.region,
      AWS_DEFAULT_REGION: world.region,
      AWS_PAGER: "",
      AWS_EC2_METADATA_DISABLED: "true",
      AWS_CONFIG_FILE: "/dev/null",
      AWS_SHARED_CREDENTIALS_FILE: "/dev/null",
    }),
    stop: () =>
      new Promise<void>((resolve, reject) => {
        endpoint.server.closeAllConnections();
        endpoint.server.close((err) => {
          if (err) reject(err);
          else resolve();
        });
      }),
  };
}
