/**
 * The approval pieces composed the way the runtime composes them — real Redis (a unique prefix per test), the
 * Kubernetes API simulator with the seed incident through the real adapter, BullMQ queues and the actions
 * worker, the Bolt app over HTTP against the fake Slack — so the e2e tests click real signed buttons and watch
 * the request message change in the fake Slack.
 */
import { webApi } from "@slack/bolt";
import type { Redis } from "ioredis";
import { ApprovalPolicy } from "../../src/approvals/policy.js";
import { ApprovalStore } from "../../src/approvals/store.js";
import type { ApprovalSigner } from "../../src/approvals/integrity.js";
import type { ApprovalRequest, Identity } from "../../src/requests/model.js";
import { ApprovalWorkflow } from "../../src/approvals/workflow.js";
import { AuditLog } from "../../src/audit/log.js";
import { createKubeAdapter } from "../../src/kube/client-node-adapter.js";
import type { KubePort } from "../../src/kube/port.js";
import type { ResourceType } from "../../src/kube/types.js";
import { createQueues, executionEnqueuer, type Queues } from "../../src/jobs/queues.js";
import { closeWorker, createActionsWorker } from "../../src/jobs/workers.js";
import { registerApprovalActions, type RemovalRequestInput } from "../../src/slack/approvals.js";
import { createSlackApprovalNotifier, createSlackDirectory } from "../../src/slack/notifier.js";
import { ApprovalActionId, renderApprovalRequest } from "../../src/slack/blocks/approval.js";
import { requestSettled } from "../helpers/requests.js";
import { connect, deleteKeys, uniquePrefix } from "../helpers/redis.js";
import { testSigner } from "../integration/approvals/helpers/harness.js";
import { startKubeSim, type KubeSim } from "../sim/kube/index.js";
import type { FakeMessage, SlackResponsePost } from "../sim/slack/index.js";
import { startHarness, type Harness, type SentRequest } from "./slack-harness.js";

export const SEED = "test/fixtures/scenarios/seed-incident.yaml";
export const CHANNEL = "C0INCIDENT";
export const TEAM = "T00000001";
export const REQUESTER: Identity = { userId: "U0ALICE", teamId: TEAM };
export const BOB: Identity = { userId: "U0BOB", teamId: TEAM };
export const CAROL: Identity = { userId: "U0CAROL", teamId: TEAM };
export const DAVE: Identity = { userId: "U0DAVE", teamId: TEAM };
export const MALLORY: Identity = { userId: "U0MALLORY", teamId: TEAM };
export const INGRESS_PATH = "/apis/networking.k8s.io/v1/namespaces/myapp/ingresses/myapp-worker-ingress";
export const WORKER_INGRESS = {
  resource: "ingresses",
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  namespace: "myapp",
  name: "myapp-worker-ingress",
} as const;

/** Real time plus an offset a test can move forward (expiry), shared by the workflow and the renderer. */
export class OffsetClock {
  private offsetMs = 0;
  public readonly now = (): Date => new Date(Date.now() + this.offsetMs);
  public advance(ms: number): void {
    this.offsetMs += ms;
  }
}

export interface FixtureOptions {
  /** Approver list: user ids and user-group ids (default Bob, Carol, Dave). */
  readonly approvers?: readonly string[];
  readonly approvalsRequired?: number;
  readonly ttlSeconds?: number;
  /** Slack user groups the fake Slack knows. */
  readonly usergroups?: Readonly<Record<string, readonly string[]>>;
  /** Start the actions worker (default true). */
  readonly worker?: boolean;
  /** Runs before each modal-driven request is created (to hold it past the submit budget). */
  readonly beforeCreate?: () => Promise<void>;
  readonly submitBudgetMs?: number;
  /** Wraps the Kubernetes port the actions worker uses (fault tests). */
  readonly executorKube?: (kube: KubePort) => KubePort;
}

export interface Fixture {
  readonly sim: KubeSim;
  readonly kube: KubePort;
  readonly h: Harness;
  readonly redis: Redis;
  readonly store: ApprovalStore;
  /** The approval store's Redis key prefix (`<prefix>:req:<id>`, `<prefix>:approved`, …). */
  readonly storePrefix: string;
  readonly signer: ApprovalSigner;
  readonly policy: ApprovalPolicy;
  readonly audit: AuditLog;
  readonly workflow: ApprovalWorkflow;
  readonly queues: Queues;
  readonly clock: OffsetClock;
  /** What the runtime's `createRemovalRequest` does: freeze the plan with evidence and a clean-up plan. */
  createRemovalRequest(input: RemovalRequestInput): Promise<ApprovalRequest>;
  /** Create a request for the seed Ingress and post it in the channel, attached, as the modal path does. */
  postRequest(requester?: Identity, finalizer?: string): Promise<{ request: ApprovalRequest; ts: string }>;
  /** Click a request message's button, signed, as `user`. */
  click(actionId: string, value: string, user: Identity, ts: string): Promise<SentRequest>;
  /**
   * Click *Deny* as `user` and submit the form it opens, with `reason` (empty: none given); the
   * submission's answer (errors shown in the form, or an empty ack).
   */
  deny(requestId: string, user: Identity, ts: string, reason?: string): Promise<SentRequest>;
  /** The ephemeral answer a click got. */
  answer(sent: SentRequest): Promise<SlackResponsePost>;
  /** The request message as it stands in the fake Slack now. */
  message(ts: string): FakeMessage;
  /** PATCH requests that reached the simulator for the seed Ingress. */
  patches(): { method: string; path: string; status: number }[];
  /** Wait until the stored request is in one of `states`. */
  settled(id: string, states?: readonly string[], timeoutMs?: number): Promise<ApprovalRequest>;
  stop(): Promise<void>;
}

/** Build everything; call `stop()` in `afterEach`. */
export async function startFixture(options: FixtureOptions = {}): Promise<Fixture> {
  const sim = await startKubeSim({ scenario: SEED, controllerIntervalMs: 50 });
  const kube = createKubeAdapter(sim.kubeconfig());
  const prefix = uniquePrefix("e2e-approval");
  const redis = connect();
  const bull = connect();
  const clock = new OffsetClock();
  // Resolved lazily: the harness starts the app first, the engine is built around it.
  const engine: { current?: { workflow: ApprovalWorkflow; audit: AuditLog } } = {};
  const h = await startHarness({
    kube,
    channels: [CHANNEL],
    now: clock.now,
    approvals: () => engine.current,
  });
  for (const [group, users] of Object.entries(options.usergroups ?? {})) h.fake.setUsergroup(group, users);

  const client = new webApi.WebClient(h.botToken, { slackApiUrl: h.fake.url });
  const store = new ApprovalStore(redis, {
    prefix: `${prefix}:approvals`,
    signer: testSigner,
    auditKey: `${prefix}:audit`,
  });
  const audit = new AuditLog(redis, { key: `${prefix}:audit` });
  const policy = new ApprovalPolicy({
    channels: [CHANNEL],
    approvers: options.approvers ?? [BOB.userId, CAROL.userId, DAVE.userId],
    directory: createSlackDirectory(client),
    now: clock.now,
  });
  const notifier = createSlackApprovalNotifier({
    client,
    now: clock.now,
    log: h.log,
    current: (id) => store.get(id),
  });
  const queues = createQueues({ connection: bull, prefix: `${prefix}:bull` });
  const workflow = new ApprovalWorkflow({
    store,
    policy,
    audit,
    kube,
    enqueueExecution: executionEnqueuer(queues.actions, { attempts: 2, backoffMs: 100 }),
    now: clock.now,
    approvalsRequired: options.approvalsRequired ?? 1,
    requestTtlSeconds: options.ttlSeconds ?? 1800,
    notifier,
    log: h.log,
  });
  engine.current = { workflow, audit };
  const worker =
    options.worker === false
      ? undefined
      : createActionsWorker(
          { connection: bull, prefix: `${prefix}:bull` },
          {
            store,
            signer: testSigner,
            policy,
            kube: options.executorKube?.(kube) ?? kube,
            audit,
            now: () => new Date(),
            notifier,
            log: h.log,
            patchRetryDelayMs: 10,
          },
        );

  const createRemovalRequest = async (input: RemovalRequestInput): Promise<ApprovalRequest> => {
    const [group, version] = input.apiVersion.includes("/")
      ? (input.apiVersion.split("/") as [string, string])
      : ["", input.apiVersion];
    const type: ResourceType = {
      group,
      version,
      apiVersion: input.apiVersion,
      kind: input.kind,
      resource: input.resource,
      namespaced: true,
      verbs: ["get", "patch"],
    };
    const object = await kube.getObject(type, input.namespace, input.name);
    const evidence =
      object === null
        ? []
        : [
            `${input.kind} ${input.namespace}/${input.name} deleting since ${object.deletionTimestamp ?? "?"} with finalizers [${object.finalizers.join(", ")}]`,
            `load balancer: ${(object.loadBalancerHostnames ?? []).join(", ") || "none"}`,
          ];
    return workflow.requestFinalizerRemoval({
      type,
      namespace: input.namespace,
      name: input.name,
      ...(input.finalizer !== undefined ? { finalizer: input.finalizer } : {}),
      reason: input.reason,
      ...(input.statements !== undefined ? { statements: input.statements } : {}),
      evidence,
      cleanupPlan: [
        "After recovery, check for orphaned ALB / target groups / security groups / ELB ENIs",
        "Confirm the old ALB DNS names answer NXDOMAIN",
      ],
      requester: input.requester,
      channelId: input.channelId,
    });
  };
  registerApprovalActions(h.slack, {
    workflow,
    createRemovalRequest: async (input) => {
      await options.beforeCreate?.();
      return createRemovalRequest(input);
    },
    now: clock.now,
    log: h.log,
    ...(options.submitBudgetMs !== undefined ? { submitBudgetMs: options.submitBudgetMs } : {}),
  });

  return {
    sim,
    kube,
    h,
    redis,
    store,
    storePrefix: `${prefix}:approvals`,
    signer: testSigner,
    policy,
    audit,
    workflow,
    queues,
    clock,
    createRemovalRequest,
    async postRequest(requester = REQUESTER, finalizer = "ingress.k8s.aws/resources") {
      const request = await createRemovalRequest({
        ...WORKER_INGRESS,
        finalizer,
        reason:
          "Namespace myapp stuck Terminating; SG deletion fails with DependencyViolation. Recovery first.",
        requester,
        channelId: CHANNEL,
      });
      const { text, blocks } = renderApprovalRequest(request, clock.now());
      const posted = await client.chat.postMessage({ channel: CHANNEL, text, blocks });
      const ts = posted.ts ?? "";
      await workflow.attachMessage(request.id, { channel: CHANNEL, ts });
      return { request: await workflow.get(request.id), ts };
    },
    click(actionId, value, user, ts) {
      return h.action({
        actionId,
        value,
        userId: user.userId,
        teamId: user.teamId,
        channelId: CHANNEL,
        messageTs: ts,
      });
    },
    async deny(requestId, user, ts, reason = "") {
      const trigger = `deny.${user.userId}.${String(Date.now())}`;
      await h.action({
        actionId: ApprovalActionId.Deny,
        value: requestId,
        userId: user.userId,
        teamId: user.teamId,
        channelId: CHANNEL,
        messageTs: ts,
        triggerId: trigger,
      });
      const opened = await h.fake.waitFor("views.open", (c) => c.body["trigger_id"] === trigger, 10_000);
      const view = opened.body["view"] as Record<string, unknown>;
      return h.viewSubmission({
        callbackId: String(view["callback_id"]),
        privateMetadata: String(view["private_metadata"]),
        values: { reason: { reason } },
        userId: user.userId,
        teamId: user.teamId,
      });
    },
    answer(sent) {
      return h.fake.waitForResponse((r) => r.id === sent.responseId, 10_000);
    },
    message(ts) {
      const m = h.fake.message(CHANNEL, ts);
      if (m === undefined) throw new Error(`no message ${ts} in the fake Slack`);
      return m;
    },
    patches: () => sim.requests().filter((r) => r.method === "PATCH" && r.path === INGRESS_PATH),
    settled(id, states, timeoutMs) {
      return requestSettled(store, id, states, timeoutMs);
    },
    async stop() {
      if (worker) await closeWorker(worker);
      await queues.close();
      await h.stop();
      await sim.stop();
      await deleteKeys(redis, prefix);
      await redis.quit();
      await bull.quit();
    },
  };
}

/** The action ids of every button in a Block Kit message. */
export function buttonIds(blocks: unknown): string[] {
  const found: string[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(visit);
      return;
    }
    if (typeof node !== "object" || node === null) return;
    const record = node as Record<string, unknown>;
    if (record["type"] === "button" && typeof record["action_id"] === "string")
      found.push(record["action_id"]);
    Object.values(record).forEach(visit);
  };
  visit(blocks);
  return found;
}

export const APPROVE = ApprovalActionId.Approve;
export const DENY = ApprovalActionId.Deny;
export const CANCEL = ApprovalActionId.Cancel;
export const DETAILS = ApprovalActionId.Details;
