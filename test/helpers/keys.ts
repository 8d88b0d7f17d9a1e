/**
 * The keys a test process signs with: one bot key pair and one worker key pair per cluster, made
 * fresh for each test process (nothing signed in one run verifies in another), and the environment
 * variables each role is configured with (`src/trust/keys.ts`, docs/design.md "Who holds which key").
 */
import { LOCAL_CLUSTER } from "../../src/config.js";
import { DeletionGuardSigner } from "../../src/approvals/deletion-guard-token.js";
import type { WatcherReceipts } from "../../src/watcher/watcher.js";
import type { SealKeys } from "../../src/trust/sealed.js";
import type { Queue } from "bullmq";
import { jobSeal, sealedWaits, type JobSeal, type WaitsQueue } from "../../src/jobs/sealed-jobs.js";
import { ApprovalSigner } from "../../src/approvals/integrity.js";
import {
  BOT,
  clusterOwner,
  generateKeyText,
  Keyring,
  parsePrivateKey,
  SigningKey,
  type ProcessKeys,
} from "../../src/trust/keys.js";

export interface KeyText {
  readonly privateKey: string;
  readonly publicKey: string;
}

export const TEST_BOT_KEY: KeyText = generateKeyText();

const clusterKeys = new Map<string, KeyText>();

/** The worker key pair of `cluster` in this test process (the single-cluster install's: `local`). */
export function workerKeyOf(cluster: string = LOCAL_CLUSTER): KeyText {
  let k = clusterKeys.get(cluster);
  if (k === undefined) {
    k = generateKeyText();
    clusterKeys.set(cluster, k);
  }
  return k;
}

export const TEST_WORKER_KEY: KeyText = workerKeyOf(LOCAL_CLUSTER);

type Role = "all" | "bot" | "worker";

/**
 * The key variables of one process of a single-cluster install: the bot's key where it takes Slack
 * requests (`bot`, `all`), the workers' where it executes (`worker`, `all`), every public key.
 */
export function keyEnv(role: Role = "all"): Record<string, string> {
  return {
    ...(role !== "worker" ? { UNSTUCK_BOT_SIGNING_KEY: TEST_BOT_KEY.privateKey } : {}),
    UNSTUCK_BOT_PUBLIC_KEYS: TEST_BOT_KEY.publicKey,
    ...(role !== "bot" ? { UNSTUCK_WORKER_SIGNING_KEY: TEST_WORKER_KEY.privateKey } : {}),
    UNSTUCK_WORKER_PUBLIC_KEYS: TEST_WORKER_KEY.publicKey,
  };
}

/** The key variables of one process of a fleet (each cluster's public keys are in the clusters file). */
export function fleetKeyEnv(role: Role, cluster?: string): Record<string, string> {
  return {
    ...(role !== "worker" ? { UNSTUCK_BOT_SIGNING_KEY: TEST_BOT_KEY.privateKey } : {}),
    UNSTUCK_BOT_PUBLIC_KEYS: TEST_BOT_KEY.publicKey,
    ...(role !== "bot" && cluster !== undefined
      ? { UNSTUCK_WORKER_SIGNING_KEY: workerKeyOf(cluster).privateKey }
      : {}),
  };
}

/** A clusters file's `publicKeys` line for a cluster (YAML flow sequence). */
export function publicKeysYaml(cluster: string): string {
  return `publicKeys: [${workerKeyOf(cluster).publicKey}]`;
}

/** The keys of a process holding both halves of a single-cluster install (role `all`). */
export function testProcessKeys(): ProcessKeys {
  const bot = new SigningKey(parsePrivateKey(TEST_BOT_KEY.privateKey, "test"), BOT);
  const worker = new SigningKey(
    parsePrivateKey(TEST_WORKER_KEY.privateKey, "test"),
    clusterOwner(LOCAL_CLUSTER),
  );
  return {
    bot,
    worker,
    keyring: new Keyring([
      { key: bot.publicKey, owner: BOT },
      { key: worker.publicKey, owner: clusterOwner(LOCAL_CLUSTER) },
    ]),
    localCluster: LOCAL_CLUSTER,
  };
}

/** The signer of a process with both halves of a single-cluster install. */
export const testSigner = new ApprovalSigner(testProcessKeys());

/** The deletion guard's signer of this test process's single-cluster workers. */
export function testGuardSigner(): DeletionGuardSigner {
  const keys = testProcessKeys();
  return new DeletionGuardSigner({
    cluster: LOCAL_CLUSTER,
    keyring: keys.keyring,
    ...(keys.worker !== undefined ? { worker: keys.worker } : {}),
  });
}

/** A deletion guard signer with a key nobody configured: what a forger without the workers' key makes. */
export function strangerGuardSigner(): DeletionGuardSigner {
  const worker = new SigningKey(
    parsePrivateKey(generateKeyText().privateKey, "test"),
    clusterOwner(LOCAL_CLUSTER),
  );
  return new DeletionGuardSigner({
    cluster: LOCAL_CLUSTER,
    keyring: new Keyring([{ key: worker.publicKey, owner: worker.owner }]),
    worker,
  });
}

/** The watcher's card receipts of a single-cluster install's workers (signed with their key). */
export function testWatcherReceipts(): WatcherReceipts {
  const keys = testProcessKeys();
  return {
    sign: (fields) => keys.worker?.sign("watcher-card", fields) ?? "",
    check: (fields, sig) => keys.keyring.verify("watcher-card", fields, sig, () => true).ok,
  };
}

/** The seal of this test process's single-cluster workers' waits. */
export function testWaitSeal(): JobSeal {
  const keys = testProcessKeys();
  return jobSeal(
    { ...(keys.worker !== undefined ? { key: keys.worker } : {}), keyring: keys.keyring },
    LOCAL_CLUSTER,
  );
}

/** A waits queue that seals what is added, as the runtime's is. */
export function testWaits(queue: Pick<Queue, "add" | "getJob" | "getJobState">): WaitsQueue {
  return sealedWaits(queue, testWaitSeal());
}

/** What this test process's single-cluster workers sign and verify with. */
export function testSeal(): SealKeys {
  const keys = testProcessKeys();
  return { ...(keys.worker !== undefined ? { key: keys.worker } : {}), keyring: keys.keyring };
}
