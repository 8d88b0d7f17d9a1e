/**
 * `npm run bench [-- name…]`: runs the benchmarks and prints each one's figures against its
 * target. Exit code 1 if a target is missed. Benchmarks are never timed assertions in tests.
 */
import { benchApprovals } from "./approvals.js";
import { benchAws } from "./aws.js";
import { benchNs } from "./ns.js";

interface Bench {
  readonly name: string;
  readonly run: () => Promise<{ name: string; lines: string[]; ok: boolean }>;
}

const BENCHES: readonly Bench[] = [
  { name: "ns", run: benchNs },
  { name: "approvals", run: benchApprovals },
  { name: "aws", run: benchAws },
];

const wanted = process.argv.slice(2);
const selected = wanted.length > 0 ? BENCHES.filter((b) => wanted.includes(b.name)) : BENCHES;
if (selected.length === 0) {
  process.stderr.write(
    `unknown benchmark(s): ${wanted.join(", ")}; known: ${BENCHES.map((b) => b.name).join(", ")}\n`,
  );
  process.exit(2);
}
let failed = 0;
for (const b of selected) {
  const r = await b.run();
  process.stdout.write(
    `\n== ${r.name} ${r.ok ? "(targets met)" : "(TARGET MISSED)"}\n${r.lines.map((l) => `  ${l}`).join("\n")}\n`,
  );
  if (!r.ok) failed++;
}
process.exitCode = failed > 0 ? 1 : 0;
