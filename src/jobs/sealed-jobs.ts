/**
 * Wait jobs sealed by the process that queued them. A wait names where it reports (a channel, a
 * thread, the status message it edits): a wait written straight into Redis could otherwise post in any
 * thread or edit any message the bot ever posted. Each wait's data is signed by its enqueuer (the bot,
 * or its cluster's workers: `src/trust/sealed.ts`), re-signed at every update, and the waits worker
 * runs only data whose seal verifies as the bot's or its own cluster's workers'.
 */
import type { JobsOptions, Queue } from "bullmq";
import { byBot, byCluster, type KeyOwner } from "../trust/keys.js";
import { seal, unseal, type Sealed, type SealKeys, type Unsealed } from "../trust/sealed.js";

const DOMAIN = "wait-job";

/** Seals a wait's data with this process's key and opens what the bot or the cluster's workers sealed. */
export interface JobSeal {
  seal(data: unknown): Sealed;
  open<T>(raw: unknown): Unsealed<T>;
}

/** The seal of a process of `cluster` (its key; the bot's and that cluster's workers' accepted). */
export function jobSeal(keys: SealKeys, cluster: string): JobSeal {
  const accepts = (owner: KeyOwner): boolean => byBot(owner) || byCluster(cluster)(owner);
  return {
    seal(data) {
      if (keys.key === undefined) throw new Error("this process holds no key to seal a wait with");
      return seal(keys.key, DOMAIN, data);
    },
    open: <T>(raw: unknown) => unseal<T>(keys.keyring, DOMAIN, raw, accepts),
  };
}

/** The job a wait check runs on: its opened data, re-sealed on update (a BullMQ job fits it too). */
export interface WaitJob<D> {
  readonly id?: string | undefined;
  readonly data: D;
  updateData(data: D): Promise<void>;
  moveToDelayed(timestamp: number, token?: string): Promise<void>;
}

/** What the enqueuers use of the waits queue. */
export interface WaitsQueue {
  add(name: string, data: unknown, opts?: JobsOptions): Promise<unknown>;
  /** The job's opened data (`undefined` when it does not verify), its state and its removal. */
  getJob(id: string): Promise<
    | {
        readonly data: unknown;
        getState(): Promise<string>;
        remove(): Promise<void>;
      }
    | undefined
  >;
  getJobState(id: string): Promise<string>;
}

/** The waits queue as the enqueuers see it: what they add is sealed, what they read back opened. */
export function sealedWaits(queue: Pick<Queue, "add" | "getJob" | "getJobState">, s: JobSeal): WaitsQueue {
  return {
    add: (name, data, opts) => queue.add(name, s.seal(data), opts),
    async getJob(id) {
      const job = await queue.getJob(id);
      if (job === undefined) return undefined;
      const opened = s.open(job.data);
      return {
        data: opened.ok ? opened.data : undefined,
        getState: () => job.getState(),
        remove: () => job.remove(),
      };
    },
    getJobState: (id) => queue.getJobState(id),
  };
}

/** A BullMQ job seen through its seal: the data opened, an update sealed again. */
export function openedJob<D>(
  job: {
    readonly id?: string | undefined;
    readonly data: unknown;
    updateData(data: unknown): Promise<void>;
    moveToDelayed(timestamp: number, token?: string): Promise<void>;
  },
  s: JobSeal,
  data: D,
): WaitJob<D> {
  let current = data;
  return {
    id: job.id,
    get data() {
      return current;
    },
    async updateData(next) {
      current = next;
      await job.updateData(s.seal(next));
    },
    moveToDelayed: (timestamp, token) => job.moveToDelayed(timestamp, token),
  };
}
