/**
 * The bot's own observations in the timeline, on the seed world: `ns myapp` and `trace ns myapp` asked in
 * an incident thread, then a namespace-gone wait in the same thread, each recorded in a real Redis audit
 * stream by the code that did it; the thread's timeline then tells them in order, with the diagnosis as
 * evidence under Cause and the wait's end under Recovery. A failing audit log never fails the command.
 */
import type { Job } from "bullmq";
import { afterEach, describe, expect, it } from "vitest";
import { defaultRegistry } from "../../../commands/index.js";
import type { CommandContext, CommandResult } from "../../../commands/types.js";
import { AuditLog } from "../../../src/audit/log.js";
import { auditObserver } from "../../../src/audit/observe.js";
import { createAwsAdapter } from "../../../src/aws/sdk-adapter.js";
import {
  checkNamespaceGone,
  type NamespaceGoneData,
  type NamespaceGoneResult,
} from "../../../src/jobs/waits.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import { silentLogger } from "../../../src/log.js";
import { connect, deleteKeys, uniquePrefix } from "../../helpers/redis.js";
import { forceRemoveSeedFinalizer, openAwsWorld, type AwsWorld } from "../helpers/aws-world.js";

const CHANNEL = "C0INCIDENT";
const THREAD = "1770885540.000100";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function rig(): Promise<{ world: AwsWorld; audit: AuditLog; ctx: CommandContext }> {
  const world = await openAwsWorld("seed-incident.yaml");
  const prefix = uniquePrefix("timeline-obs");
  const redis = connect();
  cleanups.push(async () => {
    await world.close();
    await deleteKeys(redis, prefix);
    await redis.quit();
  });
  const audit = new AuditLog(redis, { key: `${prefix}:audit` });
  const kube = createKubeAdapter(world.w.kube.kubeconfig());
  const ctx: CommandContext = {
    actor: { userId: "U0ONCALL1", teamId: "T1", channelId: CHANNEL, threadTs: THREAD, surface: "slack" },
    services: {
      kube,
      now: () => new Date(),
      log: silentLogger(),
      aws: { port: createAwsAdapter(world.c) },
      // Only the audit log is used here; the workflow is never touched by these reads.
      approvals: { audit, workflow: undefined as never },
    },
  };
  return { world, audit, ctx };
}

function markdownOf(result: CommandResult): string {
  if (result.type !== "timeline") throw new Error(`expected a timeline, got ${JSON.stringify(result)}`);
  return result.markdown;
}

describe("observations in the timeline", () => {
  it("ns, trace and a wait in a thread show up in that thread's draft", async () => {
    const { world, audit, ctx } = await rig();
    const registry = defaultRegistry();
    expect((await registry.dispatch("ns myapp", ctx)).type).toBe("diagnosis");
    expect((await registry.dispatch("trace ns myapp", ctx)).type).toBe("trace");

    await forceRemoveSeedFinalizer(world.w);
    const data: NamespaceGoneData = {
      cluster: "seed",
      namespace: "myapp",
      channel: CHANNEL,
      threadTs: THREAD,
      deadline: Date.now() + 60_000,
      intervalMs: 1000,
      checks: 0,
    };
    const job = { data, id: "ns-gone" } as unknown as Job<NamespaceGoneData, NamespaceGoneResult>;
    const posted: string[] = [];
    const result = await checkNamespaceGone(job, undefined, {
      kube: ctx.services.kube,
      reporter: {
        post: (_c, _t, text) => {
          posted.push(text);
          return Promise.resolve({ ts: "1770885600.000001" });
        },
        update: () => Promise.resolve(),
      },
      describeBlockers: () => Promise.resolve([]),
      now: () => new Date(),
      record: auditObserver(audit, () => new Date()),
    });
    expect(result.outcome).toBe("gone");

    const events = (await audit.latest(50)).map((e) => e.event).reverse();
    expect(events).toEqual([
      "observed.diagnosis",
      "observed.path-check",
      "observed.wait-started",
      "observed.wait-finished",
    ]);
    const stored = await audit.latest(50);
    expect(stored.every((e) => e.channel === CHANNEL && e.threadTs === THREAD)).toBe(true);

    const md = markdownOf(await registry.dispatch("timeline", ctx));
    const timeline = md.split("## Timeline (UTC)")[1]?.split("\n## ")[0] ?? "";
    const lines = timeline.split("\n").filter((l) => l.startsWith("- "));
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/unstuck \(ns\) — diagnosed `namespace myapp`: `blocked/);
    expect(lines[1]).toMatch(
      /unstuck \(trace\) — checked the traffic path of `namespace myapp`: `\d+ paths: .*stale/,
    );
    expect(lines[2]).toContain("started waiting: `namespace myapp`");
    expect(lines[3]).toContain("finished waiting: `namespace myapp`: `✅ Namespace myapp is gone");
    const what = md.split("## What happened")[1]?.split("## Timeline")[0] ?? "";
    expect(what).toMatch(/the bot diagnosed `namespace myapp`: `blocked/);
    const recovery = md.split("## Recovery")[1]?.split("## Cause")[0] ?? "";
    expect(recovery).toContain("How the bot verified it:");
    expect(recovery).toContain("Namespace myapp is gone");
    const cause = md.split("## Cause")[1]?.split("## Lessons")[0] ?? "";
    expect(cause).toContain("What the bot's diagnoses found");
    expect(md).toMatch(/## Lessons\n\n_to be written: /);

    // Another thread of the same channel sees none of it.
    const other = markdownOf(
      await registry.dispatch("timeline", { ...ctx, actor: { ...ctx.actor, threadTs: "1770889999.000900" } }),
    );
    expect(other).toContain("No audit entries for this thread");
  });

  it("an audit log that cannot be written does not fail the diagnosis", async () => {
    const { ctx } = await rig();
    const broken = connect();
    await broken.quit();
    const audit = new AuditLog(broken, { key: "unstuck-test:broken:audit", log: silentLogger() });
    const result = await defaultRegistry().dispatch("ns myapp", {
      ...ctx,
      services: { ...ctx.services, approvals: { audit, workflow: undefined as never } },
    });
    expect(result.type).toBe("diagnosis");
  });
});
