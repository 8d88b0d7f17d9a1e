/**
 * What the bot ran during the bursts of `bench/approvals.ts`, from its CPU profile:
 *
 *   UNSTUCK_BENCH_CPU_PROF=/tmp/prof npm run bench -- approvals
 *   npx tsx bench/profile-bursts.ts /tmp/prof [label prefix, default "approve"] [top, default 30]
 *
 * Only the samples taken while a burst whose label starts with the prefix was in flight (sent until
 * every ack was read) count. Prints the busy share of those windows, then self time by package and
 * by function, and inclusive time by function (each function once per sample).
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

interface ProfileNode {
  readonly id: number;
  readonly callFrame: {
    readonly functionName: string;
    readonly url: string;
    readonly lineNumber: number;
  };
  readonly children?: readonly number[];
}

interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

interface Burst {
  readonly label: string;
  readonly startUs: number;
  readonly endUs: number;
}

function where(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url.replace(/^file:\/\//, "").replace(/^.*\/node_modules\//, "~/");
  const short = file.replace(/^.*\/work\/main\//, "");
  return `${functionName || "(anonymous)"} ${short}:${String(lineNumber + 1)}`;
}

function packageOf(node: ProfileNode): string {
  const { url, functionName } = node.callFrame;
  if (url === "") return functionName.startsWith("(") ? functionName : "(native)";
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm?.[1] !== undefined) return nm[1];
  if (url.startsWith("node:")) return url.split("/")[0] ?? url;
  const local = /\/work\/main\/([^/]+\/[^/]+)/.exec(url);
  return local?.[1] ?? url;
}

function top(map: Map<string, number>, n: number, totalUs: number): string[] {
  return [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(
      ([k, us]) =>
        `${(us / 1000).toFixed(1).padStart(8)} ms ${((100 * us) / totalUs).toFixed(1).padStart(5)}%  ${k}`,
    );
}

async function main(): Promise<void> {
  const [dir, prefix = "approve", topArg = "30"] = process.argv.slice(2);
  if (dir === undefined) throw new Error("usage: profile-bursts.ts <dir> [label prefix] [top]");
  const files = (await readdir(dir)).filter((f) => f.endsWith(".cpuprofile")).sort();
  const file = files.at(-1);
  if (file === undefined) throw new Error(`no .cpuprofile in ${dir}`);
  const profile = JSON.parse(await readFile(join(dir, file), "utf8")) as Profile;
  const bursts = (JSON.parse(await readFile(join(dir, "bursts.json"), "utf8")) as Burst[]).filter((b) =>
    b.label.startsWith(prefix),
  );
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

  const self = new Map<string, number>();
  const packages = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let windowUs = 0;
  for (const b of bursts) windowUs += b.endUs - b.startUs;
  let sampledUs = 0;
  let idleUs = 0;
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    t += delta;
    if (!bursts.some((b) => t >= b.startUs && t <= b.endUs)) continue;
    // A sample stands for the time until the next one.
    const us = profile.timeDeltas[i + 1] ?? delta;
    const node = byId.get(profile.samples[i] ?? -1);
    if (node === undefined) continue;
    sampledUs += us;
    if (node.callFrame.functionName === "(idle)") {
      idleUs += us;
      continue;
    }
    const key = where(node);
    self.set(key, (self.get(key) ?? 0) + us);
    const pkg = packageOf(node);
    packages.set(pkg, (packages.get(pkg) ?? 0) + us);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const n = byId.get(id);
      if (n === undefined) break;
      const k = where(n);
      if (seen.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + us);
    }
  }
  const n = Number(topArg);
  const busyUs = sampledUs - idleUs;
  const out = (s: string): boolean => process.stdout.write(`${s}\n`);
  out(
    `${file}: ${String(bursts.length)} burst(s) "${prefix}*", ${(windowUs / 1000).toFixed(0)} ms in all; ` +
      `busy ${(busyUs / 1000).toFixed(0)} ms, idle ${(idleUs / 1000).toFixed(0)} ms`,
  );
  out("\nself time by package:");
  for (const l of top(packages, n, busyUs)) out(l);
  out("\nself time by function:");
  for (const l of top(self, n, busyUs)) out(l);
  out("\ninclusive time by function:");
  for (const l of top(inclusive, n, busyUs)) out(l);
}

await main();
