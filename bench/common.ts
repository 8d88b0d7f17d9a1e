/**
 * What every benchmark shares: its result shape (figures with targets, correctness checks), the
 * run-size knobs, statistics, and a child-process runner that times a fresh process.
 *
 * A benchmark separates two kinds of outcome. A *check* is a correctness assertion (a count, an
 * exact number of API calls, one execution for fifty clicks): a failed check makes `npm run bench`
 * exit non-zero. A *figure* may carry a target (a time, a ratio); a missed target is printed as
 * missed, never fails the run, because timing on a shared 2-core machine is noise-prone.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";

/** One line of the result table. */
export interface Figure {
  /** What was measured, e.g. `ns warm (in-process)`. */
  readonly what: string;
  /** The measured value, with its unit and spread. */
  readonly value: string;
  /** The goal, e.g. `≤ 400 ms`; absent when the figure is informational. */
  readonly target?: string;
  /** Whether the goal was met (absent with no target). */
  readonly met?: boolean;
}

/** A correctness assertion; any failed check fails the run. */
export interface Check {
  readonly what: string;
  readonly ok: boolean;
  /** What was expected and what was seen. */
  readonly detail: string;
}

export interface BenchResult {
  readonly name: string;
  /** The world and the method, printed above the table. */
  readonly context: readonly string[];
  readonly figures: readonly Figure[];
  readonly checks: readonly Check[];
}

export interface BenchOptions {
  /** Repetitions of every timed measurement, the same for unstuck and its baseline (≥ 3). */
  readonly runs: number;
  /** World size multiplier (1, 4, 16…): types × objects and the size of bulk worlds. */
  readonly scale: number;
}

/** `UNSTUCK_BENCH_RUNS` (default 3, at least 3) and `UNSTUCK_BENCH_SCALE` (default 1). */
export function benchOptions(env: NodeJS.ProcessEnv = process.env): BenchOptions {
  const runs = Number(env.UNSTUCK_BENCH_RUNS ?? "3");
  const scale = Number(env.UNSTUCK_BENCH_SCALE ?? "1");
  if (!Number.isInteger(runs) || runs < 3) throw new Error("UNSTUCK_BENCH_RUNS must be an integer ≥ 3");
  if (!Number.isInteger(scale) || scale < 1) throw new Error("UNSTUCK_BENCH_SCALE must be an integer ≥ 1");
  return { runs, scale };
}

export function check(what: string, ok: boolean, detail: string): Check {
  return { what, ok, detail };
}

/** The median (the upper one for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** Nearest-rank percentile of unsorted values. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
}

/** `1234 ms` under 10 s, `12.3 s` above. */
export function ms(value: number): string {
  return value < 10_000 ? `${value.toFixed(0)} ms` : `${(value / 1000).toFixed(1)} s`;
}

/** `median (median of N: a, b, c)` */
export function spread(values: readonly number[]): string {
  return `${ms(median(values))} (median of ${values.length}: ${values.map((v) => v.toFixed(0)).join(", ")} ms)`;
}

export interface ProcessRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly elapsedMs: number;
}

/**
 * Run a fresh process to its end without blocking this event loop (the simulators the process
 * talks to live in it), timing it from spawn to exit.
 */
export function runProcess(
  command: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<ProcessRun> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(command, args, {
      env: options.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 300_000);
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({
        code,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
        elapsedMs: performance.now() - t0,
      });
    });
  });
}

/**
 * A long-lived child process spoken to in lines: `request(command)` writes a line to its stdin
 * and resolves with its next stdout line (`request()` only waits for one, e.g. a ready line).
 */
export class LineProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly lines: string[] = [];
  private readonly waiting: ((line: string) => void)[] = [];
  private stderr = "";
  private readonly exited: Promise<number | null>;

  public constructor(command: string, args: readonly string[], env: NodeJS.ProcessEnv) {
    this.child = spawn(command, args, { env, stdio: ["pipe", "pipe", "pipe"] });
    this.child.stderr.on(
      "data",
      (c: Buffer) => (this.stderr = (this.stderr + c.toString("utf8")).slice(-4000)),
    );
    createInterface({ input: this.child.stdout }).on("line", (line) => {
      const next = this.waiting.shift();
      if (next) next(line);
      else this.lines.push(line);
    });
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
  }

  public request(command?: string, timeoutMs = 300_000): Promise<string> {
    if (command !== undefined) this.child.stdin.write(`${command}\n`);
    const ready = this.lines.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no answer to ${command ?? "start"}: ${this.stderr}`)),
        timeoutMs,
      );
      const gone = (code: number | null): void => {
        clearTimeout(timer);
        reject(new Error(`the process exited (${String(code)}) before answering: ${this.stderr}`));
      };
      void this.exited.then(gone);
      this.waiting.push((line) => {
        clearTimeout(timer);
        resolve(line);
      });
    });
  }

  public async close(): Promise<void> {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 10_000);
    await this.exited;
    clearTimeout(timer);
  }
}

/**
 * This process's environment without the bot's own settings (`UNSTUCK_*`, `AWS_*`, `KUBECONFIG`,
 * Slack and Redis variables), plus `extra`: a benchmark's child process must talk to the simulators,
 * never to a real cluster or AWS account configured in the shell that runs the benchmark.
 */
export function isolatedEnv(extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(UNSTUCK_|AWS_|SLACK_)|^(KUBECONFIG|REDIS_URL|PORT)$/.test(key)) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

/** `DescribeTags×5, GetResources×21`: a run's API calls counted by action, in first-seen order. */
export function callBreakdown(calls: readonly { readonly action: string }[]): string {
  const byAction = new Map<string, number>();
  for (const c of calls) byAction.set(c.action, (byAction.get(c.action) ?? 0) + 1);
  return [...byAction].map(([a, n]) => `${a}×${String(n)}`).join(", ");
}

/** The runs whose call count is not `expected`, each with its breakdown (empty when all are). */
export function runsOff(
  counts: readonly number[],
  expected: number,
  breakdowns: readonly string[],
): string[] {
  return counts
    .map((n, i) => ({ n, i }))
    .filter(({ n }) => n !== expected)
    .map(({ n, i }) => `run ${String(i + 1)}: ${String(n)} calls (${breakdowns[i] ?? ""})`);
}

/** Rebuild `dist/` when a source (or the lockfile: dependencies are bundled) is newer than its stamp, as `npm start` does. */
export async function ensureBuilt(): Promise<string> {
  const fresh = await runProcess("sh", [
    "-c",
    '[ -f dist/.built ] && [ -z "$(find src commands test/sim deploy/build.ts package-lock.json -newer dist/.built -print -quit)" ]',
  ]);
  if (fresh.code === 0) return "dist/ up to date";
  const built = await runProcess("npm", ["run", "--silent", "build"], { timeoutMs: 600_000 });
  if (built.code !== 0)
    throw new Error(`npm run build failed: ${(built.stdout + built.stderr).slice(-2000)}`);
  return `dist/ rebuilt (npm run build, ${(built.elapsedMs / 1000).toFixed(0)} s)`;
}

let kubectlPath: string | undefined;

/**
 * The kubectl the benchmarks time: `UNSTUCK_BENCH_KUBECTL`, else the plain `kubectl.<major>.<minor>`
 * beside a version dispatcher — the Google Cloud SDK's `kubectl` asks the server's `/version` and
 * execs the matching `kubectl.1.xx` on every call (~24 ms and one request more than kubectl itself)
 * — matching the simulator's version (1.32), else `kubectl` as found on PATH.
 */
export function kubectlBinary(): string {
  if (kubectlPath !== undefined) return kubectlPath;
  const given = process.env.UNSTUCK_BENCH_KUBECTL?.trim();
  if (given) return (kubectlPath = given);
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const found = join(dir, "kubectl");
    if (!existsSync(found)) continue;
    const plain = join(dirname(realpathSync(found)), "kubectl.1.32");
    return (kubectlPath = existsSync(plain) ? plain : found);
  }
  return (kubectlPath = "kubectl");
}
