/**
 * The layer rules (`.dependency-cruiser.cjs`, run by `npm run lint`) bite: a small tree laid out like
 * this repository, with one offending import per rule next to the allowed imports closest to it,
 * gives exactly the expected violations; and the repository itself gives none.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../../..");
const CONFIG = join(ROOT, ".dependency-cruiser.cjs");
const DEPCRUISE = join(ROOT, "node_modules/dependency-cruiser/bin/dependency-cruiser.mjs");

interface Violation {
  readonly rule: { readonly name: string };
  readonly from: string;
  readonly to: string;
}

/** Cruise `src` and `commands` under `cwd` with the repository's rules; the violations as `rule: from → to`. */
async function violations(cwd: string): Promise<string[]> {
  const { stdout } = await run(
    process.execPath,
    [DEPCRUISE, "--config", CONFIG, "--output-type", "json", "src", "commands"],
    { cwd, maxBuffer: 64 * 1024 * 1024 },
  );
  const result = JSON.parse(stdout) as { summary: { violations: Violation[] } };
  return result.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
}

/** A stand-in package: the rules look at where an import resolves, not at what it holds. */
function fakePackage(name: string): Record<string, string> {
  return {
    [`node_modules/${name}/package.json`]: JSON.stringify({ name, version: "0.0.0", main: "index.js" }),
    [`node_modules/${name}/index.js`]: "export const x = 1;\n",
    [`node_modules/${name}/index.d.ts`]: "export declare const x: number;\n",
  };
}

const FILES: Record<string, string> = {
  "tsconfig.json": JSON.stringify({
    compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true },
    include: ["src", "commands", "test"],
  }),
  ...fakePackage("ioredis"),
  ...fakePackage("@slack/web-api"),

  // no-cycles: a cycle through a type-only import is still a cycle (reported once).
  "src/util/a.ts": 'import type { B } from "./b.js";\nexport const a = 1;\nexport type A = B;\n',
  "src/util/b.ts": 'import { a } from "./a.js";\nexport type B = number;\nexport const b = a;\n',

  // core-is-pure: no socket in the edge model, no adapter type in a renderer; snapshot types are fine.
  "src/edge/model.ts":
    'import { Resolver } from "node:dns/promises";\nimport type { S } from "../kube/types.js";\nexport const r = Resolver;\nexport type M = S;\n',
  "src/kube/types.ts": "export type S = string;\n",
  "src/kube/port.ts": 'import type { S } from "./types.js";\nexport interface KubePort { get(): S }\n',
  "src/kube/client-node-adapter.ts":
    'import type { KubePort } from "./port.js";\nexport const createKubeAdapter = (): KubePort | undefined => undefined;\n',
  "src/render/text.ts":
    'import type { createKubeAdapter } from "../kube/client-node-adapter.js";\nexport type T = typeof createKubeAdapter;\n',

  // io-in-adapters: Redis is loaded by src/redis-connection.ts, not by the audit log; Slack types are
  // free for that rule (engine-speaks-no-slack still flags them in the watcher).
  "src/redis-connection.ts": 'import { x } from "ioredis";\nexport const redis = x;\n',
  "src/audit/log.ts": 'import { x } from "ioredis";\nexport const log = x;\n',
  "src/watcher/service.ts": 'import type { x } from "@slack/web-api";\nexport type W = typeof x;\n',

  // adapters-wired-at-the-top: a collector uses the port; the wiring builds the adapter; probe types are free.
  "src/traffic/trace.ts":
    'import { createKubeAdapter } from "../kube/client-node-adapter.js";\nexport const t = createKubeAdapter;\n',
  "src/services.ts":
    'import { createKubeAdapter } from "./kube/client-node-adapter.js";\nexport const s = createKubeAdapter;\n',
  "src/net/probe.ts": "export interface EdgeProbe { resolve(name: string): Promise<string[]> }\n",
  "src/jobs/edge-waits.ts": 'import type { EdgeProbe } from "../net/probe.js";\nexport type P = EdgeProbe;\n',

  // aws-sdk-only-in-src-aws: the CloudFront adapter loads the SDK; a collector may not, not even a type.
  ...fakePackage("@aws-sdk/client-cloudfront"),
  "src/aws/cloudfront.ts":
    'import { x } from "@aws-sdk/client-cloudfront";\nexport const createCloudFrontAdapter = () => x;\n',
  "src/traffic/repoint.ts":
    'import type { x } from "@aws-sdk/client-cloudfront";\nexport type DistributionConfig = typeof x;\n',

  // src-below-commands: only an entry point imports commands/.
  "commands/types.ts": "export type CommandResult = string;\n",
  "commands/index.ts":
    'import type { CommandResult } from "./types.js";\nexport const defaultRegistry = (): CommandResult => "";\n',
  "src/slack/command.ts":
    'import type { CommandResult } from "../../commands/types.js";\nexport type R = CommandResult;\n',
  "src/runtime.ts":
    'import { defaultRegistry } from "../commands/index.js";\nexport const r = defaultRegistry;\n',

  // commands-below-surfaces: a handler never reaches for Slack.
  "src/slack/blocks/text.ts": "export const clip = (s: string): string => s;\n",
  "commands/ns.ts": 'import { clip } from "../src/slack/blocks/text.js";\nexport const ns = clip;\n',

  // runtime-target-injected: the store is passed in, not imported.
  "src/approvals/store.ts": "export const approvalIndexCounts = (): number => 0;\n",
  "src/ops/runtime-target.ts":
    'import { approvalIndexCounts } from "../approvals/store.js";\nexport const c = approvalIndexCounts;\n',

  // jobs-run-actions and approvals-below-actions.
  "src/jobs/deletion-guard.ts": "export interface GuardCloseData { readonly requestId: string }\n",
  "src/actions/deletion-guard.ts":
    'import type { GuardCloseData } from "../jobs/deletion-guard.js";\nexport type D = GuardCloseData;\n',
  "src/approvals/workflow.ts": 'import type { D } from "../actions/deletion-guard.js";\nexport type W = D;\n',

  // edge-below-diagnosis.
  "src/diagnosis/lbc-names.ts": "export const LBC_TAGS = {};\n",
  "src/edge/ownership.ts":
    'import { LBC_TAGS } from "../diagnosis/lbc-names.js";\nexport const o = LBC_TAGS;\n',

  // blocks-only-render: the watcher imports the blocks, not the reverse.
  "src/watcher/watcher.ts":
    'import { clip } from "../slack/blocks/text.js";\nexport const renderGoneCard = clip;\n',
  "src/slack/blocks/watch.ts":
    'import { renderGoneCard } from "../../watcher/watcher.js";\nexport const w = renderGoneCard;\n',

  // timeline-not-slack (and, the timeline being pure, core-is-pure).
  "src/slack/slack-errors.ts": "export const slackErrorCode = (): string => '';\n",
  "src/timeline/slack.ts":
    'import { slackErrorCode } from "../slack/slack-errors.js";\nexport const t = slackErrorCode;\n',

  // app-speaks-no-slack and app-called-by-wiring: the wiring (which may also hand out the registry)
  // calls the use cases; a use case never reaches for Slack, and the engine never calls a use case.
  "src/app/requests.ts": "export const requests = 1;\n",
  "src/app/posted.ts": 'import { clip } from "../slack/blocks/text.js";\nexport const posted = clip;\n',
  "src/wiring/bot.ts":
    'import { requests } from "../app/requests.js";\nimport { defaultRegistry } from "../../commands/index.js";\nexport const bot = [requests, defaultRegistry];\n',
  "src/jobs/after.ts": 'import { requests } from "../app/requests.js";\nexport const after = requests;\n',

  // down-only-*: the order of layers.cjs. A collector carved out of src/diagnosis/ may import the
  // analysis beside it, never the reverse; the pure core may read the edge probes' contract.
  "src/diagnosis/diagnose.ts": 'import { analyze } from "./analyze.js";\nexport const diagnose = analyze;\n',
  "src/diagnosis/analyze.ts":
    'import type { D } from "./deadline.js";\nexport const analyze = (d: D): D => d;\n',
  "src/diagnosis/deadline.ts": "export type D = number;\n",
  "src/net/port.ts": "export type HttpResult = { readonly status: number };\n",
  "src/edge/edge-wait.ts": 'import type { HttpResult } from "../net/port.js";\nexport type L = HttpResult;\n',

  // product-not-tests: the entry point's dynamic import of the sandbox is the one exception.
  "test/sim/sandbox.ts": "export const runSandbox = (): number => 0;\n",
  "test/sim/world.ts": "export const world = 1;\n",
  "src/main.ts":
    'export async function main(): Promise<number> {\n  const sandbox: typeof import("../test/sim/sandbox.js") = await import("../test/sim/sandbox.js");\n  return sandbox.runSandbox();\n}\n',
  "src/cli.ts": 'import { world } from "../test/sim/world.js";\nexport const c = world;\n',
};

const EXPECTED = [
  "adapters-wired-at-the-top: src/traffic/trace.ts → src/kube/client-node-adapter.ts",
  "app-called-by-wiring: src/jobs/after.ts → src/app/requests.ts",
  "app-speaks-no-slack: src/app/posted.ts → src/slack/blocks/text.ts",
  "approvals-below-actions: src/approvals/workflow.ts → src/actions/deletion-guard.ts",
  "aws-sdk-only-in-src-aws: src/traffic/repoint.ts → node_modules/@aws-sdk/client-cloudfront/index.js",
  "blocks-only-render: src/slack/blocks/watch.ts → src/watcher/watcher.ts",
  "commands-below-surfaces: commands/ns.ts → src/slack/blocks/text.ts",
  "core-is-pure: src/edge/model.ts → dns/promises",
  "core-is-pure: src/render/text.ts → src/kube/client-node-adapter.ts",
  "core-is-pure: src/slack/blocks/watch.ts → src/watcher/watcher.ts",
  "core-is-pure: src/timeline/slack.ts → src/slack/slack-errors.ts",
  "down-only-adapters: src/ops/runtime-target.ts → src/approvals/store.ts",
  "down-only-engine: src/jobs/after.ts → src/app/requests.ts",
  "down-only-pure-core: src/diagnosis/analyze.ts → src/diagnosis/deadline.ts",
  "down-only-pure-core: src/slack/blocks/watch.ts → src/watcher/watcher.ts",
  "down-only-pure-core: src/timeline/slack.ts → src/slack/slack-errors.ts",
  "edge-below-diagnosis: src/edge/ownership.ts → src/diagnosis/lbc-names.ts",
  // engine-speaks-no-slack: below the surfaces nothing imports Slack, not even a type.
  "engine-speaks-no-slack: src/timeline/slack.ts → src/slack/slack-errors.ts",
  "engine-speaks-no-slack: src/watcher/service.ts → node_modules/@slack/web-api/index.js",
  "engine-speaks-no-slack: src/watcher/watcher.ts → src/slack/blocks/text.ts",
  "io-in-adapters-network: src/edge/model.ts → dns/promises",
  "io-in-adapters-redis: src/audit/log.ts → node_modules/ioredis/index.js",
  "jobs-run-actions: src/actions/deletion-guard.ts → src/jobs/deletion-guard.ts",
  "no-cycles: src/util/a.ts → src/util/b.ts",
  "product-not-tests: src/cli.ts → test/sim/world.ts",
  "runtime-target-injected: src/ops/runtime-target.ts → src/approvals/store.ts",
  "src-below-commands: src/slack/command.ts → commands/types.ts",
  "timeline-not-slack: src/timeline/slack.ts → src/slack/slack-errors.ts",
].sort();

describe("layer rules", () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "unstuck-layers-"));
    for (const [path, text] of Object.entries(FILES)) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), text);
    }
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("flag each kind of offending import, and nothing next to it that is allowed", async () => {
    expect(await violations(dir)).toEqual(EXPECTED);
  }, 60_000);

  it("hold in this repository", async () => {
    expect(await violations(ROOT)).toEqual([]);
  }, 60_000);
});
