/**
 * The keys one process runs with, from its configuration and role: the Slack-facing bot signs as the
 * bot, a worker as its cluster, `all` as both; everyone verifies with every public key configured.
 * Checked once at start, naming the variable at fault: a bot whose workers could not verify it, or a
 * worker whose key its cluster's listing lacks, would otherwise fail at the first request instead.
 */
import type { KeyObject } from "node:crypto";
import { LOCAL_CLUSTER, type Config, type Role } from "../config.js";
import { ErrorCode, UnstuckError } from "../errors.js";
import { BOT, clusterOwner, Keyring, keyIdOf, publicKeyText, SigningKey, type ProcessKeys } from "./keys.js";

function configError(variable: string, message: string): UnstuckError {
  return new UnstuckError(ErrorCode.Config, message, { variable });
}

function listed(key: KeyObject, among: readonly KeyObject[]): boolean {
  const id = keyIdOf(key);
  return among.some((k) => keyIdOf(k) === id);
}

/** The cluster this process's workers sign for: a fleet's `UNSTUCK_CLUSTER_NAME`, else the single cluster. */
export function ownClusterOf(config: Pick<Config, "fleet" | "clusterName">): string {
  return config.fleet !== undefined ? (config.clusterName ?? "") : LOCAL_CLUSTER;
}

/** The part of the configuration the keys come from. */
type KeyConfig = Pick<Config, "keys" | "fleet" | "clusterName">;

/** Each role holds its own signing key, and only that one. */
function checkSigningKeysHeld(keys: Config["keys"], signsAsBot: boolean, signsAsWorker: boolean): void {
  // A key held where it is not needed is a key one more pod can leak: each role holds only its own.
  if (!signsAsBot && keys.botSigningKey !== undefined) {
    throw configError(
      "UNSTUCK_BOT_SIGNING_KEY",
      "UNSTUCK_BOT_SIGNING_KEY is set on a worker: only the Slack-facing bot may hold it (with it a worker pod could approve anything). Unset it here; workers need only UNSTUCK_BOT_PUBLIC_KEYS.",
    );
  }
  if (!signsAsWorker && keys.workerSigningKey !== undefined) {
    throw configError(
      "UNSTUCK_WORKER_SIGNING_KEY",
      "UNSTUCK_WORKER_SIGNING_KEY is set on the bot: only a cluster's workers may hold it. Unset it here; the bot needs only the workers' public keys.",
    );
  }
  if (signsAsBot && keys.botSigningKey === undefined) {
    throw configError(
      "UNSTUCK_BOT_SIGNING_KEY",
      "UNSTUCK_BOT_SIGNING_KEY is not set: the bot signs every request and vote with it (an Ed25519 key; `npm run unstuck -- keys` makes one), kept outside Redis.",
    );
  }
  if (signsAsWorker && keys.workerSigningKey === undefined) {
    throw configError(
      "UNSTUCK_WORKER_SIGNING_KEY",
      "UNSTUCK_WORKER_SIGNING_KEY is not set: workers sign what they execute with it (an Ed25519 key of this cluster's own; `npm run unstuck -- keys` makes one).",
    );
  }
}

/** Adds the bot's keys to the keyring: its own signing key (when it signs, and listed) and every public one. */
function addBotKeys(keyring: Keyring, keys: Config["keys"], signsAsBot: boolean): void {
  const botPublic = [...keys.botPublicKeys];
  if (keys.botSigningKey !== undefined && signsAsBot) {
    if (botPublic.length > 0 && !listed(keys.botSigningKey, botPublic)) {
      throw configError(
        "UNSTUCK_BOT_PUBLIC_KEYS",
        `UNSTUCK_BOT_PUBLIC_KEYS does not list the public key of UNSTUCK_BOT_SIGNING_KEY (${publicKeyText(new SigningKey(keys.botSigningKey, BOT).publicKey)}): the workers could not verify what this bot signs.`,
      );
    }
    keyring.add(keys.botSigningKey, BOT);
  }
  if (botPublic.length === 0 && !signsAsBot) {
    throw configError(
      "UNSTUCK_BOT_PUBLIC_KEYS",
      "UNSTUCK_BOT_PUBLIC_KEYS is not set: workers verify the bot's requests, votes and calls with it (the public half of the bot's UNSTUCK_BOT_SIGNING_KEY).",
    );
  }
  for (const k of botPublic) keyring.add(k, BOT);
}

/**
 * Adds every cluster's worker public keys to the keyring, then this process's own worker signing
 * key (when it signs as a worker, and its cluster's listing has it); answers that signing key.
 */
function addWorkerKeys(keyring: Keyring, config: KeyConfig, signsAsWorker: boolean): SigningKey | undefined {
  const { keys } = config;
  const own = ownClusterOf(config);
  for (const [cluster, list] of keys.workerPublicKeys)
    for (const k of list) keyring.add(k, clusterOwner(cluster));
  if (!signsAsWorker || keys.workerSigningKey === undefined) return undefined;
  const worker = new SigningKey(keys.workerSigningKey, clusterOwner(own));
  const ownList = keys.workerPublicKeys.get(own) ?? [];
  if (config.fleet !== undefined && !listed(keys.workerSigningKey, ownList)) {
    throw configError(
      "UNSTUCK_CLUSTERS_FILE",
      `UNSTUCK_CLUSTERS_FILE lists no public key of cluster ${own} matching UNSTUCK_WORKER_SIGNING_KEY: add ${publicKeyText(worker.publicKey)} to clusters.${own}.publicKeys, or the bot cannot verify what these workers sign.`,
    );
  }
  if (config.fleet === undefined && ownList.length > 0 && !listed(keys.workerSigningKey, ownList)) {
    throw configError(
      "UNSTUCK_WORKER_PUBLIC_KEYS",
      `UNSTUCK_WORKER_PUBLIC_KEYS does not list the public key of UNSTUCK_WORKER_SIGNING_KEY (${publicKeyText(worker.publicKey)}): the bot could not verify what these workers sign.`,
    );
  }
  keyring.add(keys.workerSigningKey, clusterOwner(own));
  return worker;
}

/** The bot verifies every cluster's workers: each cluster it serves needs at least one public key. */
function checkEveryClusterVerifiable(keyring: Keyring, config: KeyConfig): void {
  const clusters = config.fleet !== undefined ? config.fleet.clusters.map((c) => c.name) : [LOCAL_CLUSTER];
  const missing = clusters.filter((c) => keyring.keyIdsOf(clusterOwner(c)).length === 0);
  if (missing.length === 0) return;
  throw config.fleet !== undefined
    ? configError(
        "UNSTUCK_CLUSTERS_FILE",
        `UNSTUCK_CLUSTERS_FILE lists no publicKeys for ${missing.join(", ")}: the bot verifies each cluster's workers with them.`,
      )
    : configError(
        "UNSTUCK_WORKER_PUBLIC_KEYS",
        "UNSTUCK_WORKER_PUBLIC_KEYS is not set: the bot verifies what the workers execute with it (the public half of their UNSTUCK_WORKER_SIGNING_KEY).",
      );
}

/** The keys this process signs and verifies with, for its role; a misconfiguration names its variable. */
export function processKeys(config: KeyConfig, role: Role): ProcessKeys {
  const { keys } = config;
  const signsAsBot = role !== "worker";
  const signsAsWorker = role !== "bot";
  checkSigningKeysHeld(keys, signsAsBot, signsAsWorker);
  const keyring = new Keyring();
  addBotKeys(keyring, keys, signsAsBot);
  const worker = addWorkerKeys(keyring, config, signsAsWorker);
  if (signsAsBot) checkEveryClusterVerifiable(keyring, config);
  return {
    ...(signsAsBot && keys.botSigningKey !== undefined
      ? { bot: new SigningKey(keys.botSigningKey, BOT) }
      : {}),
    ...(worker !== undefined ? { worker } : {}),
    keyring,
    localCluster:
      config.fleet !== undefined
        ? (config.clusterName ?? config.fleet.clusters[0]?.name ?? "")
        : LOCAL_CLUSTER,
  };
}
