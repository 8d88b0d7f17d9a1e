/**
 * Where the first burst after start-up spends its time: `npx tsx bench/first-burst.ts [variant…]`.
 * For each variant a fresh bot (the bundle as the image runs it, `UNSTUCK_ROLE=all`, AWS configured,
 * the seed incident) takes two bursts of 50 concurrent signed `/unstuck ns myapp`, sent from a
 * client thread; printed per burst: ack p50/p99/max, the API requests the bot made during it (from
 * the simulator's log, by kind) and the time to the last answer. Variants:
 *   `ready`  the burst as soon as `/readyz` answers 200 (what `npm run bench -- approvals` does);
 *   `idle`   5 s after ready: whatever start-up left running in the background is done (also
 *            with `single`: `single-idle`);
 *   `warmed` one `ns myapp` answered first: the command path, the adapter and discovery used once;
 *   `single` no burst: five `ns myapp` one after another, each with the bot's CPU time it cost
 *            (/proc/<pid>/stat), which the machine's load does not inflate as it does wall time;
 *            `single:<text>` sends `/unstuck <text>` first (e.g. `single:ns default`), as command 0.
 * `UNSTUCK_FIRST_BURST_PROF=<dir>` writes each bot's CPU profile there, and `<dir>/bursts.json` the
 * span of each burst or command (labelled `<variant> <n>`) for `bench/profile-bursts.ts <dir> <label>`.
 * A diagnostic script, not part of `npm run bench`.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { performance } from "node:perf_hooks";
import { signRequest, slashCommandBody } from "../test/sim/slack/index.js";
import { ClientThread } from "./approvals.js";
import { ms, percentile } from "./common.js";
import { classify, describeRequests } from "./ns.js";
import {
  answeredCommands,
  CHART_NODE_OPTIONS,
  ensureBuilt,
  startBot,
  startWorld,
  type World,
} from "./ship.js";

const CONCURRENT = 50;
const CHANNEL = "C0INCIDENT";
const variants = process.argv.length > 2 ? process.argv.slice(2) : ["ready", "idle", "warmed"];
const out = (s: string): boolean => process.stdout.write(`${s}\n`);
const sleep = (t: number): Promise<void> => new Promise((r) => setTimeout(r, t));

/** A process's CPU time so far (user + system), in ms. */
async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${String(pid)}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

async function answered(world: World, before: number, count: number): Promise<void> {
  const until = Date.now() + 120_000;
  while (answeredCommands(world) - before < count) {
    if (Date.now() > until) throw new Error("not answered within 120 s");
    await sleep(5);
  }
}

out(await ensureBuilt());
const world = await startWorld();
const clients = new ClientThread();
const prof = process.env.UNSTUCK_FIRST_BURST_PROF;
if (prof !== undefined) await mkdir(prof, { recursive: true });
/** Spans in CLOCK_MONOTONIC µs, the clock of V8's profile timestamps (Linux). */
const spans: { label: string; startUs: number; endUs: number }[] = [];
const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);
try {
  for (const variant of variants) {
    const bot = await startBot(world, {
      role: "bot",
      entry: "compiled",
      env: { UNSTUCK_ROLE: "all" },
      ...(prof !== undefined
        ? { nodeOptions: `${CHART_NODE_OPTIONS} --cpu-prof --cpu-prof-dir=${prof}` }
        : {}),
    });
    try {
      out(`${variant}: ready in ${ms(bot.readyMs)}`);
      await clients.send([{ url: `${bot.ops}/readyz`, method: "GET" }]);
      if (variant.includes("idle")) await sleep(5_000);
      const body = (label: string, text = "ns myapp"): string =>
        slashCommandBody({
          text,
          userId: "U0ONCALL1",
          channelId: CHANNEL,
          responseUrl: world.fake.responseUrl(label),
        });
      if (variant === "warmed") {
        const before = answeredCommands(world);
        const b = body(`${variant}-warm`);
        await clients.send([
          { url: bot.events, method: "POST", headers: { ...signRequest(world.secret, b) }, body: b },
        ]);
        await answered(world, before, 1);
      }
      if (variant.startsWith("single")) {
        const first = variant.startsWith("single:") ? variant.slice("single:".length) : undefined;
        for (let n = first !== undefined ? 0 : 1; n <= 5; n++) {
          const before = answeredCommands(world);
          const cpu0 = await cpuMs(bot.pid);
          const t0 = performance.now();
          const startUs = monotonicUs();
          const b = body(`${variant}-${String(n)}`, n === 0 ? first : undefined);
          const [sent] = await clients.send([
            { url: bot.events, method: "POST", headers: { ...signRequest(world.secret, b) }, body: b },
          ]);
          await answered(world, before, 1);
          const wall = performance.now() - t0;
          spans.push({ label: `${variant} ${String(n)}`, startUs, endUs: monotonicUs() });
          await sleep(200);
          out(
            `  command ${String(n)}: ack ${ms(sent?.ackMs ?? Number.NaN)}, answered after ${ms(wall)}, bot CPU ${ms((await cpuMs(bot.pid)) - cpu0)}`,
          );
        }
        continue;
      }
      for (let n = 1; n <= 2; n++) {
        world.sim.resetRequests();
        const before = answeredCommands(world);
        const t0 = performance.now();
        const startUs = monotonicUs();
        const bodies = Array.from({ length: CONCURRENT }, (_, i) =>
          body(`${variant}-${String(n)}-${String(i)}`),
        );
        const sent = await clients.signed(bot.events, world.secret, bodies);
        await answered(world, before, CONCURRENT);
        spans.push({ label: `${variant} ${String(n)}`, startUs, endUs: monotonicUs() });
        const acks = sent.map((s) => s.ackMs);
        out(
          `  burst ${String(n)}: ack p50 ${ms(percentile(acks, 50))}, p99 ${ms(percentile(acks, 99))}, max ${ms(Math.max(...acks))}; ` +
            `all answered after ${ms(performance.now() - t0)}; ${describeRequests(classify(world.sim.requests()))}`,
        );
      }
    } finally {
      await bot.stop();
    }
  }
} finally {
  if (prof !== undefined) await writeFile(`${prof}/bursts.json`, JSON.stringify(spans, null, 2));
  await clients.close();
  await world.stop();
}
