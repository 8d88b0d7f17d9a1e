/**
 * What the bot's resident set is made of, and what V8 flags do to it (target: RSS ≤ 200 MiB):
 * `node --import tsx bench/rss.ts [diagnoses] [variant…]`. A variant is NODE_OPTIONS, with any
 * leading `NAME=value` words set in the environment instead (e.g. `MALLOC_ARENA_MAX=2`). For each
 * (default: the chart's, then a few alternatives) one compiled bot process (the memory bench's harness,
 * bench/ship.ts) is measured when ready and after `diagnoses` signed `ns myapp` (seed incident, 4 in
 * flight): VmRSS, its anonymous and file-backed parts (/proc/<pid>/smaps_rollup), and V8's heap and
 * external memory from /metrics. With `UNSTUCK_RSS_SNAPSHOT=1` the first bot also writes a heap
 * snapshot when ready and one after the diagnoses (`--heapsnapshot-signal=SIGUSR2`, in the working directory).
 * A diagnostic script, not part of `npm run bench`.
 */
import { readFile } from "node:fs/promises";
import {
  answeredCommands,
  ensureBuilt,
  metric,
  sendDiagnoses,
  startBot,
  startWorld,
  type BotProcess,
  type World,
} from "./ship.js";

const MiB = 1024 * 1024;
const diagnoses = Number(process.argv[2] ?? "300");
const variants =
  process.argv.length > 3
    ? process.argv.slice(3)
    : [
        "--max-old-space-size=320 --max-semi-space-size=8",
        "--max-old-space-size=320 --max-semi-space-size=2",
        "--max-old-space-size=160 --max-semi-space-size=2",
        "MALLOC_ARENA_MAX=2 --max-old-space-size=320 --max-semi-space-size=2",
      ];
const snapshot = process.env.UNSTUCK_RSS_SNAPSHOT === "1";
const out = (s: string): boolean => process.stdout.write(`${s}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The bot's resident-set target (docs/design.md, Performance targets). */
const TARGET_MIB = 200;

async function sample(bot: BotProcess): Promise<string> {
  const rollup = await readFile(`/proc/${String(bot.pid)}/smaps_rollup`, "utf8");
  const kb = (field: string): number =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(rollup)?.[1] ?? 0);
  const rss = kb("Rss") * 1024;
  const anon = kb("Anonymous") * 1024;
  const m = async (name: string): Promise<string> => {
    const v = await metric(bot.ops, name);
    return v === undefined ? "?" : (v / MiB).toFixed(0);
  };
  return (
    `RSS ${(rss / MiB).toFixed(0)} MiB [target ≤ ${String(TARGET_MIB)} MiB: ${rss <= TARGET_MIB * MiB ? "met" : "MISSED"}] (anonymous ${(anon / MiB).toFixed(0)}, file-backed ${((rss - anon) / MiB).toFixed(0)}); ` +
    `V8 heap total ${await m("nodejs_heap_size_total_bytes")}, used ${await m("nodejs_heap_size_used_bytes")}, ` +
    `external ${await m("nodejs_external_memory_bytes")} MiB`
  );
}

async function run(world: World, variant: string, first: boolean): Promise<void> {
  const words = variant.split(/\s+/).filter((w) => w !== "");
  const env = Object.fromEntries(
    words
      .filter((w) => /^[A-Z_]+=/.test(w))
      .map((w) => [w.slice(0, w.indexOf("=")), w.slice(w.indexOf("=") + 1)]),
  );
  const nodeOptions = words.filter((w) => !/^[A-Z_]+=/.test(w)).join(" ");
  const bot = await startBot(world, {
    role: "bot",
    entry: "compiled",
    nodeOptions: first && snapshot ? `${nodeOptions} --heapsnapshot-signal=SIGUSR2` : nodeOptions,
    env,
  });
  try {
    await sleep(1_000);
    out(variant);
    out(`  ready (${bot.readyMs.toFixed(0)} ms): ${await sample(bot)}`);
    if (first && snapshot) {
      process.kill(bot.pid, "SIGUSR2");
      await sleep(8_000);
    }
    const answered = (): number => answeredCommands(world);
    const before = answered();
    const t0 = performance.now();
    await sendDiagnoses(world, bot, diagnoses, 4, "rss");
    while (answered() - before < diagnoses) await sleep(10);
    const ms = performance.now() - t0;
    await sleep(1_000);
    out(
      `  after ${String(diagnoses)} diagnoses (${(ms / diagnoses).toFixed(0)} ms each, 4 in flight): ${await sample(bot)}`,
    );
    if (first && snapshot) {
      process.kill(bot.pid, "SIGUSR2");
      await sleep(8_000);
      out("  heap snapshot written (Heap.*.heapsnapshot in the working directory)");
    }
  } finally {
    await bot.stop();
  }
}

out(await ensureBuilt());
const world = await startWorld();
try {
  let first = true;
  for (const v of variants) {
    await run(world, v, first);
    first = false;
  }
} finally {
  await world.stop();
}
