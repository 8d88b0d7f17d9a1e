/**
 * The seed incident's recovery through the product's own wiring (`createRuntime`): signed slash
 * commands and button clicks over HTTP, the fake Slack Web API, real Redis and BullMQ, the kube
 * simulator. Diagnose → request removal → the requester cannot approve → a second person approves
 * → executed once → the namespace-gone wait reports in the thread → audit shows every step.
 */
import { finalizerRemoval } from "../../src/requests/model.js";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { createKubeAdapter } from "../../src/kube/client-node-adapter.js";
import type { Runtime } from "../../src/runtime.js";
import { destroyAwsClients, type AwsClients } from "../../src/aws/clients.js";
import { createAwsAdapter } from "../../src/aws/sdk-adapter.js";
import { deletePrefix, uniquePrefix } from "../helpers/redis.js";
import type { KubeSim } from "../sim/kube/index.js";
import { startWorld, type World } from "../sim/world.js";
import { eventually } from "../helpers/eventually.js";
import {
  blockActionsBody,
  postSigned,
  slashCommandBody,
  startFakeSlack,
  type FakeSlack,
} from "../sim/slack/index.js";
import { buttonValue } from "./block-kit.js";
import { botEnv, simAwsClients, startRuntime } from "./bot-env.js";

const SECRET = "e2e-signing-secret";
const TOKEN = "xoxb-e2e-runtime-token";
const CHANNEL = "C0INCIDENT";
const REQUESTER = "U0ONCALL1";
const APPROVER = "U0APPROVER1";

describe("seed incident recovery through the runtime", () => {
  let world: World;
  let sim: KubeSim;
  let clients: AwsClients;
  let fake: FakeSlack;
  let runtime: Runtime;
  let events: string;
  const prefix = uniquePrefix("e2e");

  beforeAll(async () => {
    // The one world (kube + AWS); the simulated controller is off, as in the incident it was stuck.
    world = await startWorld({
      scenario: "test/fixtures/scenarios/seed-incident.yaml",
      controllerIntervalMs: 100,
      lbc: false,
    });
    sim = world.kube;
    clients = simAwsClients(world.aws.url, 2);
    fake = await startFakeSlack({ token: TOKEN });
    const config = loadConfig(
      botEnv(
        { token: TOKEN, secret: SECRET, slackUrl: fake.url, prefix },
        {
          UNSTUCK_APPROVERS: APPROVER,
          UNSTUCK_CHANNELS: CHANNEL,
          UNSTUCK_WAIT_INTERVAL_SECONDS: "1",
          UNSTUCK_CLUSTER_NAME: "prod-eks",
        },
      ),
    );
    ({ runtime, events } = await startRuntime(config, {
      kube: createKubeAdapter(sim.kubeconfig()),
      aws: { port: createAwsAdapter(clients) },
    }));
  });

  afterAll(async () => {
    await runtime.stop();
    await deletePrefix(prefix);
    await fake.stop();
    destroyAwsClients(clients);
    await world.stop();
  });

  const command = async (text: string, userId = REQUESTER): Promise<number> => {
    const res = await postSigned(
      events,
      SECRET,
      slashCommandBody({
        text,
        userId,
        channelId: CHANNEL,
        responseUrl: fake.responseUrl(randomBytes(4).toString("hex")),
      }),
    );
    return res.status;
  };
  const click = async (
    actionId: string,
    value: string,
    userId: string,
    messageTs: string,
  ): Promise<number> => {
    const res = await postSigned(
      events,
      SECRET,
      blockActionsBody({
        actionId,
        value,
        userId,
        channelId: CHANNEL,
        messageTs,
        responseUrl: fake.responseUrl(`click-${userId}`),
      }),
    );
    return res.status;
  };

  it("diagnoses, requests, refuses self-approval, executes once on a second person's approval, and watches the namespace go", async () => {
    expect(await command("ns myapp")).toBe(200);
    const diagnosis = await fake.waitFor("chat.postMessage", (c) =>
      JSON.stringify(c.body).includes("myapp-worker-ingress"),
    );
    expect(JSON.stringify(diagnosis.body)).toContain("BLOCKED");

    expect(
      await command(
        'finalize ingress/myapp-worker-ingress -n myapp --reason "cause confirmed: SG held by an ENI; recovery first"',
      ),
    ).toBe(200);
    const posted = await fake.waitFor("chat.postMessage", (c) =>
      JSON.stringify(c.body).includes("approval:approve"),
    );
    const blocksText = JSON.stringify(posted.body);
    expect(blocksText).toContain("ingress.k8s.aws/resources");
    // Why, in one sentence: the exact AWS object that holds the backend security group.
    expect(blocksText).toMatch(/held by network interface eni-[0-9a-f]+/);
    const id = buttonValue(posted.body.blocks, "approval:approve");
    expect(id).toBeDefined();
    const request = await eventually(async () => {
      const r = await runtime.workflow.get(id!);
      return r.message ? r : undefined;
    });
    expect(request.state).toBe("PENDING");
    expect(finalizerRemoval(request.action).precondition.finalizers).toEqual(["ingress.k8s.aws/resources"]);
    const ts = request.message!.ts;

    // Details, for whoever clicks it: the controller's error and CloudTrail's record, with times as
    // people read them and the failing caller named by its role, not a session ARN.
    expect(await click("approval:details", id!, APPROVER, ts)).toBe(200);
    const details = JSON.stringify(
      (await fake.waitForResponse((p) => p.id === `click-${APPROVER}`)).body["blocks"],
    ).replace(/<!date[^>]*>/g, "");
    expect(details).toContain("failed to delete securityGroup");
    expect(details).toMatch(/CloudTrail DeleteSecurityGroup sg-[0-9a-f]+ at \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ/);
    expect(details).toMatch(/\(by role [^)]+\)/);
    expect(details).not.toMatch(/\d\d:\d\d:\d\d\.\d{3}Z/);
    expect(details).not.toContain("assumed-role/");

    // The requester cannot approve their own request; nothing changes.
    expect(await click("approval:approve", id!, REQUESTER, ts)).toBe(200);
    await fake.waitForResponse((p) => JSON.stringify(p.body).toLowerCase().includes("someone else"));
    expect((await runtime.workflow.get(id!)).state).toBe("PENDING");

    sim.resetRequests();
    expect(await click("approval:approve", id!, APPROVER, ts)).toBe(200);
    const done = await eventually(async () => {
      const r = await runtime.workflow.get(id!);
      return r.state === "DONE" ? r : undefined;
    }, 20_000);
    expect(done.result?.outcome).toBe("done");
    expect(sim.requests().filter((r) => r.method === "PATCH")).toHaveLength(1);

    // The namespace goes; the wait's status message in the request's thread says so.
    await eventually(
      () =>
        Promise.resolve(
          sim.store.get("v1", "Namespace", undefined, "myapp") === undefined ? true : undefined,
        ),
      20_000,
    );
    await eventually(
      () =>
        Promise.resolve(
          fake.thread(CHANNEL, ts).some((m) => /gone|deleted/i.test(m.text ?? "")) ? true : undefined,
        ),
      20_000,
    );
    // Then, by itself, in the same thread: what the forced removal left in AWS (the backend group
    // and the interface of the deleted ALB) and the traffic path that still names deleted ALBs —
    // test.example.com's CloudFront origin (docs/incident.md, steps 9–11).
    const orphans = await eventually(
      () => Promise.resolve(fake.thread(CHANNEL, ts).find((m) => /orphan/i.test(m.text ?? ""))),
      20_000,
    );
    expect(orphans.text).toMatch(/eni-0c9d8e7f6a5b4c3d2/);
    const path = await eventually(
      () =>
        Promise.resolve(
          fake.thread(CHANNEL, ts).find((m) => /Traffic path of namespace myapp/.test(m.text ?? "")),
        ),
      20_000,
    );
    // A card: how many are broken, each name once under what brings it back — nothing is re-created
    // until the namespace's owners are — and how to repair later.
    expect(path.text).toMatch(/is broken: 7 of 7 hostnames/);
    expect(JSON.stringify(path.blocks).split("test.example.com")).toHaveLength(2);
    expect(JSON.stringify(path.blocks)).toContain("re-sync the Argo CD Application");
    expect(JSON.stringify(path.blocks)).toContain("Nothing can be repointed yet");
    expect(JSON.stringify(path.blocks)).toContain("repoint ns myapp");
    // The original message shows the final state, without buttons.
    const message = fake.message(CHANNEL, ts);
    expect(JSON.stringify(message?.blocks)).not.toContain("approval:approve");
    expect(JSON.stringify(message?.blocks)).toContain("DONE");

    // Every transition is in the audit log.
    const entries = await runtime.audit.latest(50);
    const mine = entries.filter((e) => e.requestId === id).map((e) => e.event);
    expect(mine).toEqual(expect.arrayContaining(["request.created", "vote.approve", "execution.enqueued"]));
    expect(mine.some((e) => e.startsWith("execution.") && e !== "execution.enqueued")).toBe(true);
  });
});
