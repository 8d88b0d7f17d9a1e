/** Builds the approval engine against real Redis with a unique prefix, plus recording test doubles. */
import type { RedisConnection } from "../../../../src/redis-connection.js";
import { ApprovalPolicy, type SlackDirectory } from "../../../../src/approvals/policy.js";
import { ApprovalStore } from "../../../../src/approvals/store.js";
import type { ApprovalSigner } from "../../../../src/approvals/integrity.js";
import type { ApprovalNotifier, ThreadEvent } from "../../../../src/approvals/notifier.js";
import type { ApprovalRequest, Identity } from "../../../../src/requests/model.js";
import { ApprovalWorkflow, type EnqueueExecution } from "../../../../src/approvals/workflow.js";
import { AuditLog } from "../../../../src/audit/log.js";
import type { KubePort } from "../../../../src/kube/port.js";
import { renderThreadReply } from "../../../../src/slack/notifier.js";
import { FakeKube, INGRESS } from "./fake-kube.js";
import { connect, deleteKeys, uniquePrefix } from "../../../helpers/redis.js";
import { testSigner } from "../../../helpers/keys.js";

export { testSigner };

export const TEAM = "T0001";
export const alice: Identity = { userId: "UALICE", teamId: TEAM };
export const bob: Identity = { userId: "UBOB", teamId: TEAM };
export const carol: Identity = { userId: "UCAROL", teamId: TEAM };
export const dave: Identity = { userId: "UDAVE", teamId: TEAM };
export const mallory: Identity = { userId: "UMALLORY", teamId: TEAM };
export const CHANNEL = "COPS";

/** Records each thread reply as the words Slack is sent (before escaping). */
export class RecordingNotifier implements ApprovalNotifier {
  public readonly updates: ApprovalRequest[] = [];
  public readonly replies: string[] = [];
  public readonly events: ThreadEvent[] = [];
  public requestUpdated(request: ApprovalRequest): Promise<void> {
    this.updates.push(request);
    return Promise.resolve();
  }
  public threadReply(_request: ApprovalRequest, event: ThreadEvent): Promise<void> {
    this.events.push(event);
    this.replies.push(renderThreadReply(event));
    return Promise.resolve();
  }
}

/** A clock tests move by hand. */
export class TestClock {
  public constructor(public current = new Date()) {}
  public readonly now = (): Date => this.current;
  public advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

export interface HarnessOptions {
  readonly approvers?: readonly string[];
  readonly approvalsRequired?: number;
  readonly directory?: SlackDirectory;
  readonly channels?: readonly string[];
  readonly enqueue?: EnqueueExecution;
  readonly kube?: KubePort;
  readonly clock?: TestClock;
  readonly ttlSeconds?: number;
  /** Key prefix for everything the test writes (default: a fresh unique one). */
  readonly prefix?: string;
  /**
   * The connection (default: a new one to the local Redis, its keys deleted on close). A given
   * connection (a Redis Cluster client) is the caller's: close() leaves it and its keys alone.
   */
  readonly redis?: RedisConnection;
}

export interface Harness {
  readonly redis: RedisConnection;
  readonly prefix: string;
  readonly signer: ApprovalSigner;
  readonly store: ApprovalStore;
  readonly audit: AuditLog;
  readonly fake: FakeKube;
  readonly policy: ApprovalPolicy;
  readonly workflow: ApprovalWorkflow;
  readonly notifier: RecordingNotifier;
  readonly clock: TestClock;
  /** Requests handed to `enqueueExecution` (when no custom enqueue is given). */
  readonly enqueued: ApprovalRequest[];
  close(): Promise<void>;
}

export function createHarness(options: HarnessOptions = {}): Harness {
  // A given connection is the caller's; one made here is closed (its keys deleted) by close().
  const owned = options.redis === undefined ? connect() : undefined;
  const redis: RedisConnection = options.redis ?? owned ?? connect();
  const prefix = options.prefix ?? uniquePrefix("approvals");
  const clock = options.clock ?? new TestClock();
  const fake = new FakeKube();
  const store = new ApprovalStore(redis, {
    prefix: `${prefix}:approvals`,
    signer: testSigner,
    auditKey: `${prefix}:audit`,
  });
  const audit = new AuditLog(redis, { key: `${prefix}:audit` });
  const policy = new ApprovalPolicy({
    channels: options.channels ?? [CHANNEL],
    approvers: options.approvers ?? [bob.userId, carol.userId, dave.userId],
    ...(options.directory ? { directory: options.directory } : {}),
    now: clock.now,
  });
  const notifier = new RecordingNotifier();
  const enqueued: ApprovalRequest[] = [];
  const workflow = new ApprovalWorkflow({
    store,
    policy,
    audit,
    kube: options.kube ?? fake,
    enqueueExecution:
      options.enqueue ??
      ((request) => {
        enqueued.push(request);
        return Promise.resolve();
      }),
    now: clock.now,
    approvalsRequired: options.approvalsRequired ?? 1,
    requestTtlSeconds: options.ttlSeconds ?? 1800,
    notifier,
  });
  return {
    redis,
    prefix,
    signer: testSigner,
    store,
    audit,
    fake,
    policy,
    workflow,
    notifier,
    clock,
    enqueued,
    async close() {
      if (owned === undefined) return;
      await deleteKeys(owned, prefix);
      await owned.quit();
    },
  };
}

/** The seed incident's blocker: a Terminating Ingress held by the AWS LB controller's finalizer. */
export function seedIngress(h: Harness, finalizers: readonly string[] = ["ingress.k8s.aws/resources"]) {
  return h.fake.putObject(INGRESS, "myapp", "myapp-worker-ingress", { finalizers, deleting: true });
}

export function requestRemoval(
  h: Harness,
  requester: Identity = alice,
  extra: { finalizer?: string; name?: string } = {},
) {
  return h.workflow.requestFinalizerRemoval({
    type: INGRESS,
    namespace: "myapp",
    name: "myapp-worker-ingress",
    reason: "SG deletion blocked by DependencyViolation; recovery first",
    evidence: ["Reconciler error: failed to delete securityGroup"],
    cleanupPlan: ["check ALB/TG/SG/ENI orphans", "old DNS names NXDOMAIN"],
    requester,
    channelId: CHANNEL,
    ...extra,
  });
}
