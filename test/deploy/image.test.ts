/**
 * The image, as the Dockerfile builds it (carried out without Docker by `./dockerfile.ts`): the
 * bundle (deploy/build.ts) and no node_modules, and an entrypoint that starts as the image's
 * numeric user on a read-only application directory with only a temporary directory writable —
 * the chart's security context. It fails fast with one clear line when it cannot work, and with its
 * dependencies present (the kube simulator, the fake Slack in Socket Mode, Redis) it becomes ready,
 * answers a command, serves /metrics, and stops cleanly on SIGTERM.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { promisify } from "node:util";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../faults/helpers.js";
import { client, deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../helpers/redis.js";
import { startKubeSim, type KubeSim } from "../sim/kube/index.js";
import { eventually } from "../helpers/eventually.js";
import { slashCommandEnvelope, startFakeSlack, type FakeSlack } from "../sim/slack/index.js";
import {
  buildWithoutDocker,
  inContext,
  parseDockerfile,
  parseDockerignore,
  runTimeImports,
  type BuiltImage,
} from "./dockerfile.js";
import { keyEnv } from "../helpers/keys.js";
import { kubeconfigFor } from "../helpers/kubeconfig.js";
import { startHttpProxy, startSocks5Proxy } from "../helpers/proxies.js";
import { startTlsFront } from "../helpers/tls-front.js";

const runFile = promisify(execFile);

const ROOT = process.cwd();
/** The `--build-arg REVISION=…` the image is built with here. */
const REVISION = `test${randomBytes(4).toString("hex")}`;
const BUILD_TOOLS = ["tsx", "esbuild", "typescript", "vitest", "eslint", "prettier", "typescript-eslint"];
const isBuildTool = (name: string): boolean => BUILD_TOOLS.includes(name) || name.startsWith("@esbuild/");

interface LockPackage {
  dev?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

/**
 * Every package `npm ci --omit=dev` installs, from package-lock.json: the closure of the root's
 * dependencies under Node's resolution (nearest node_modules up the tree).
 */
export function productionClosure(lock: { packages: Record<string, LockPackage> }): Set<string> {
  const packages = lock.packages;
  const root = packages[""] ?? {};
  const resolve = (from: string, name: string): string | undefined => {
    let base = from;
    for (;;) {
      const candidate = `${base === "" ? "" : `${base}/`}node_modules/${name}`;
      if (packages[candidate] !== undefined) return candidate;
      if (base === "") return undefined;
      const i = base.lastIndexOf("/node_modules/");
      base = i < 0 ? "" : base.slice(0, i);
    }
  };
  const seen = new Set<string>();
  const queue: { from: string; name: string }[] = Object.keys(root.dependencies ?? {}).map((name) => ({
    from: "",
    name,
  }));
  while (queue.length > 0) {
    const next = queue.pop();
    if (!next) break;
    const path = resolve(next.from, next.name);
    if (path === undefined || seen.has(path)) continue;
    seen.add(path);
    const p = packages[path] ?? {};
    const peers = Object.keys(p.peerDependencies ?? {}).filter(
      (n) => p.peerDependenciesMeta?.[n]?.optional !== true,
    );
    for (const name of [
      ...Object.keys(p.dependencies ?? {}),
      ...Object.keys(p.optionalDependencies ?? {}),
      ...peers,
    ]) {
      queue.push({ from: path, name });
    }
  }
  return seen;
}

const nameOf = (lockPath: string): string => lockPath.slice(lockPath.lastIndexOf("node_modules/") + 13);

async function filesUnder(dir: string, suffix: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith(suffix)) out.push(join(entry.parentPath, entry.name));
  }
  return out;
}

/** The build's metafile: each output's imports and the inputs it holds. */
interface BuildMeta {
  readonly outputs: Record<
    string,
    {
      readonly imports?: readonly { readonly path: string; readonly kind: string }[];
      readonly inputs: Record<string, { readonly bytesInOutput: number }>;
    }
  >;
}

/**
 * The inputs (source and package files) of what `entry` loads: through its static imports only
 * (what it evaluates before it runs), or through every import (all it can ever load).
 */
function inputsLoadedBy(meta: BuildMeta, entry: string, imports: "static" | "all"): string[] {
  const loaded = new Set<string>();
  const pending = [entry];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (loaded.has(file)) continue;
    loaded.add(file);
    for (const i of meta.outputs[file]?.imports ?? [])
      if ((imports === "all" || i.kind === "import-statement") && meta.outputs[i.path] !== undefined)
        pending.push(i.path);
  }
  return [...loaded].flatMap((f) =>
    Object.entries(meta.outputs[f]?.inputs ?? {})
      .filter(([, { bytesInOutput }]) => bytesInOutput > 0)
      .map(([input]) => input),
  );
}
describe("production dependencies (package-lock.json)", () => {
  it("include no build tool: tsx, esbuild, TypeScript and the test and lint tools are dev-only", async () => {
    const lock = JSON.parse(await readFile(join(ROOT, "package-lock.json"), "utf8"));
    const closure = productionClosure(lock);
    const names = [...closure].map(nameOf);
    expect(names.length).toBeGreaterThan(20);
    expect(names.filter(isBuildTool)).toEqual([]);
    // npm marks what --omit=dev leaves out; the closure and the marks agree.
    for (const [path, p] of Object.entries(lock.packages as Record<string, LockPackage>)) {
      if (path === "" || p.dev === true) continue;
      expect(closure.has(path), `${path} is not dev-only but unreachable from dependencies`).toBe(true);
    }
    const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8"));
    expect(Object.keys(pkg.dependencies).filter(isBuildTool)).toEqual([]);
    expect(pkg.engines.node).toBe(">=24");
  });
});

describe("Dockerfile", () => {
  it("builds on Node 24, ships the bundle only (no node_modules), as a numeric non-root user", async () => {
    const stages = parseDockerfile(await readFile(join(ROOT, "Dockerfile"), "utf8"));
    // Node 24 on Debian, pinned by digest (a tag alone may change between two builds of one revision).
    for (const s of stages) expect(s.from).toMatch(/^node:24(\.\d+)*-bookworm-slim@sha256:[0-9a-f]{64}$/);
    const final = stages.at(-1);
    const copies = final?.instructions.filter((i) => i.op === "COPY").map((i) => i.args) ?? [];
    expect(copies).toEqual([
      "--from=build /app/dist/src ./dist/src",
      "--from=build /app/dist/chunks ./dist/chunks",
      "package.json LICENSE ./",
      "--from=build /app/dist/sbom.cdx.json ./sbom.cdx.json",
    ]);
    const build = stages.find((s) => s.name === "build");
    expect(build?.instructions.filter((i) => i.op === "RUN").map((i) => i.args)).toEqual([
      "npm ci --no-audit --no-fund --loglevel=error",
      "npm run build",
    ]);
    const user = final?.instructions.filter((i) => i.op === "USER").at(-1)?.args ?? "";
    expect(user).toMatch(/^[1-9]\d*(:\d+)?$/);
    expect(JSON.parse(final?.instructions.find((i) => i.op === "CMD")?.args ?? "[]")).toEqual([
      "node",
      "dist/src/main.js",
    ]);
  });
});

describe(".dockerignore (the build context)", () => {
  it("lets in every file the Dockerfile copies from the context, and nothing else of the checkout", async () => {
    const rules = parseDockerignore(await readFile(join(ROOT, ".dockerignore"), "utf8"));
    const stages = parseDockerfile(await readFile(join(ROOT, "Dockerfile"), "utf8"));
    const copied = stages
      .flatMap((s) => s.instructions)
      .filter((i) => i.op === "COPY" && !i.args.startsWith("--from="))
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    expect(copied).toContain("deploy/build.ts");
    for (const src of copied) expect(inContext(rules, src.replace(/\/$/, "")), src).toBe(true);
    for (const inside of ["src/main.ts", "test/sim/sandbox.ts", "src/redis/lua/approval-create.4.lua"])
      expect(inContext(rules, inside), inside).toBe(true);
    for (const outside of [
      "test/unit/edge/model.test.ts",
      "node_modules/undici/package.json",
      "dist/src/main.js",
      "README.md",
      "deploy/chart/unstuck/values.yaml",
    ])
      expect(inContext(rules, outside), outside).toBe(false);
    // The rule this relies on: without it, the build script is not in the context (Docker: "not found").
    const without = parseDockerignore("*\n!src/\n");
    expect(inContext(without, "deploy/build.ts")).toBe(false);
    expect(inContext(without, "src/cli.ts")).toBe(true);
  });
});

interface Run {
  readonly child: ChildProcess;
  out(): string;
  err(): string;
  readonly exited: Promise<number | null>;
}

describe("the image's entrypoint, built as the Dockerfile builds it", () => {
  let work: string;
  let image: BuiltImage;
  let writable: string;
  let uid: number | undefined;
  let gid: number | undefined;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), "unstuck-image-"));
    await chmod(work, 0o755);
    image = await buildWithoutDocker(ROOT, join(ROOT, "Dockerfile"), join(work, "stages"), {
      REVISION: REVISION,
      SOURCE: "https://git.example.com/platform/unstuck",
    });
    // The chart's security context: the image's user, a read-only root filesystem, /tmp an emptyDir.
    if (process.getuid?.() === 0) {
      [uid, gid] = image.user.split(":").map(Number);
      gid ??= uid;
    }
    await makeReadOnly(image.dir);
    writable = join(work, "tmp");
    await mkdir(writable);
    if (uid !== undefined && gid !== undefined) await chown(writable, uid, gid);
  }, 480_000);

  afterAll(async () => {
    await rm(work, { recursive: true, force: true, maxRetries: 3 }).catch(async () => {
      await makeWritable(work);
      await rm(work, { recursive: true, force: true });
    });
  });

  function start(env: Record<string, string>): Run {
    // ENTRYPOINT then CMD, as a container runtime joins them: this machine's tini (the package the
    // image installs) and node stand for the image's own.
    const [command = "", ...args] = [...image.entrypoint, ...image.cmd].map((a) =>
      a === "node" ? process.execPath : a,
    );
    if (!existsSync(command))
      throw new Error(
        `${command}, the image's ENTRYPOINT, is not on this machine: apt-get install ${image.packages.join(" ")} (.ci/run does)`,
      );
    const child = spawn(command, args, {
      cwd: image.dir,
      env: {
        ...image.env,
        PATH: process.env.PATH ?? "",
        HOME: "/nonexistent",
        TMPDIR: writable,
        // tini is PID 1 in the container, not here: as a child subreaper it reaps as PID 1 would
        // (and does not warn that it is not PID 1).
        TINI_SUBREAPER: "1",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
      ...(uid !== undefined && gid !== undefined ? { uid, gid } : {}),
    });
    let out = "";
    let err = "";
    child.stdout?.on("data", (c: Buffer) => (out += c.toString("utf8")));
    child.stderr?.on("data", (c: Buffer) => (err += c.toString("utf8")));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    return { child, out: () => out, err: () => err, exited };
  }

  it("is labelled with its source, revision, version and licence (OCI image labels)", async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as {
      version: string;
      license: string;
    };
    expect(image.labels).toMatchObject({
      "org.opencontainers.image.title": "unstuck",
      "org.opencontainers.image.revision": REVISION,
      "org.opencontainers.image.source": "https://git.example.com/platform/unstuck",
      "org.opencontainers.image.version": pkg.version,
      "org.opencontainers.image.licenses": pkg.license,
    });
    expect(image.env["UNSTUCK_REVISION"]).toBe(REVISION);
    expect(await readFile(join(image.dir, "LICENSE"), "utf8")).toContain("Apache License");
  });

  it("carries a CycloneDX SBOM naming every npm package the bundle holds, at its locked version", async () => {
    const sbom = JSON.parse(await readFile(join(image.dir, "sbom.cdx.json"), "utf8")) as {
      bomFormat: string;
      metadata: { component: { name: string; type: string } };
      components: { name: string; version: string; purl: string; licenses?: unknown[] }[];
    };
    expect(sbom.bomFormat).toBe("CycloneDX");
    expect(sbom.metadata.component).toMatchObject({ name: "unstuck", type: "application" });
    const listed = new Set(sbom.components.map((c) => `${c.name}@${c.version}`));
    // What the bundle holds, from the build's metafile: every package with bytes in an image output.
    const meta = JSON.parse(await readFile(join(work, "stages", "build", "dist", ".meta.json"), "utf8")) as {
      outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>;
    };
    const lock = JSON.parse(await readFile(join(ROOT, "package-lock.json"), "utf8")) as {
      packages: Record<string, { version?: string }>;
    };
    const bundled = new Set<string>();
    for (const [file, output] of Object.entries(meta.outputs)) {
      if (file.includes("/test/sim/")) continue;
      for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
        const at = input.lastIndexOf("node_modules/");
        if (at < 0 || bytesInOutput === 0) continue;
        const [first = "", second = ""] = input.slice(at + 13).split("/");
        const name = first.startsWith("@") ? `${first}/${second}` : first;
        // The lockfile's key: from the first node_modules/ (the build stage links the checkout's).
        const key = `${input.slice(input.indexOf("node_modules/"), at)}node_modules/${name}`;
        bundled.add(`${name}@${lock.packages[key]?.version ?? "?"}`);
      }
    }
    expect(bundled.size).toBeGreaterThan(50);
    expect([...bundled].filter((p) => !listed.has(p))).toEqual([]);
    expect([...listed].filter((p) => !bundled.has(p))).toEqual([]);
    // Build tools never reach the image, so never its SBOM.
    for (const tool of BUILD_TOOLS) expect(sbom.components.map((c) => c.name)).not.toContain(tool);
    expect(sbom.components.every((c) => c.purl.startsWith("pkg:npm/"))).toBe(true);
  });

  it("holds of @kubernetes/client-node only the kubeconfig, watch and error code: no generated client", async () => {
    const meta = JSON.parse(await readFile(join(work, "stages", "build", "dist", ".meta.json"), "utf8")) as {
      outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>;
    };
    const held = new Set<string>();
    for (const output of Object.values(meta.outputs))
      for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
        const at = input.indexOf("@kubernetes/client-node/dist/");
        if (at >= 0 && bytesInOutput > 0) held.add(input.slice(at + "@kubernetes/client-node/dist/".length));
      }
    expect([...held]).toEqual(expect.arrayContaining(["config.js", "watch.js", "gen/apis/exception.js"]));
    // The generated API clients and their ~1,000 model classes (and the serializer over them).
    const generated = [...held].filter((f) => /^gen\/(models|types)\/|^gen\/apis\/(?!exception\.js)/.test(f));
    expect(generated).toEqual([]);
  });

  it("gives the terminal of undici its pools, request API and fetch: no mock, cache, interceptor or WebSocket code", async () => {
    const meta = JSON.parse(
      await readFile(join(work, "stages", "build", "dist", ".meta.json"), "utf8"),
    ) as BuildMeta;
    // Everything `node dist/src/cli.js` can load, at start-up or later (the bot's Socket Mode client
    // takes undici whole for its WebSocket; the terminal never loads it).
    const held = inputsLoadedBy(meta, "dist/src/cli.js", "all").flatMap((input) => {
      const at = input.indexOf("node_modules/undici/");
      return at >= 0 ? [input.slice(at + "node_modules/undici/".length)] : [];
    });
    expect(held).toEqual(
      expect.arrayContaining([
        "lib/dispatcher/agent.js",
        "lib/dispatcher/proxy-agent.js",
        "lib/api/api-request.js",
        "lib/web/fetch/index.js",
      ]),
    );
    const unused = /^index\.js$|^lib\/(mock|cache|interceptor|web\/websocket)\//;
    expect(held.filter((f) => unused.test(f))).toEqual([]);
  });

  it("holds zod's small build for the configuration; its full build only in the sandbox", async () => {
    const meta = JSON.parse(await readFile(join(work, "stages", "build", "dist", ".meta.json"), "utf8")) as {
      outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>;
    };
    const zodBytes = (file: string, pattern: RegExp): number =>
      Object.entries(meta.outputs[file]?.inputs ?? {})
        .filter(([input]) => pattern.test(input))
        .reduce((n, [, { bytesInOutput }]) => n + bytesInOutput, 0);
    const product = Object.keys(meta.outputs).filter((f) => f.endsWith(".js") && !f.includes("/test/sim/"));
    // The full build's schemas (zod/v4/classic) never in what the bot and the CLI load.
    expect(product.filter((f) => zodBytes(f, /node_modules\/zod\/v4\/classic\//) > 0)).toEqual([]);
    const inProduct = product.reduce((n, f) => n + zodBytes(f, /node_modules\/zod\//), 0);
    expect(inProduct).toBeGreaterThan(0);
    expect(inProduct).toBeLessThan(100_000);
  });

  it("starts the terminal with its own code only: commands, diagnosis and renderers load after", async () => {
    const meta = JSON.parse(
      await readFile(join(work, "stages", "build", "dist", ".meta.json"), "utf8"),
    ) as BuildMeta;
    // What `node dist/src/cli.js` evaluates before it runs: `ns <name>` sends its first reads before
    // the parser, the commands (the path, orphan, preflight and timeline ones only when asked for),
    // the diagnosis and the renderers are even read from disk.
    const inputs = inputsLoadedBy(meta, "dist/src/cli.js", "static");
    expect(inputs).toContain("src/cli.ts");
    expect(inputs).toContain("src/kube/names.ts");
    const later = /^commands\/|^src\/(diagnosis|render|traffic|orphans|preflight|kube\/client-node-adapter)/;
    expect(inputs.filter((i) => later.test(i))).toEqual([]);
    const all = inputsLoadedBy(meta, "dist/src/cli.js", "all");
    expect(all).toContain("src/diagnosis/diagnose.ts");
    expect(all).toContain("commands/index.ts");
  });

  it("runs node under an init (Debian's tini) as PID 1, which passes signals on and reaps", () => {
    expect(image.packages).toContain("tini");
    expect(image.entrypoint).toEqual(["/usr/bin/tini", "--"]);
    expect(image.cmd).toEqual(["node", "dist/src/main.js"]);
  });

  it("holds the bundle, package.json, its LICENSE and SBOM only: no node_modules, no TypeScript, no sandbox", async () => {
    expect((await readdir(image.dir)).sort()).toEqual(["LICENSE", "dist", "package.json", "sbom.cdx.json"]);
    expect((await readdir(join(image.dir, "dist"))).sort()).toEqual(["chunks", "src"]);
    expect((await readdir(join(image.dir, "dist", "src"))).filter((f) => f.endsWith(".js")).sort()).toEqual([
      "cli.js",
      "main.js",
    ]);
    expect(await filesUnder(join(image.dir, "dist"), ".ts")).toEqual([]);
    // `"type": "module"`: what makes Node read the bundle's .js files as ES modules.
    expect(JSON.parse(await readFile(join(image.dir, "package.json"), "utf8")).type).toBe("module");
    // Every asset read at run time beside the code that reads it (the Lua scripts of src/redis/lua).
    const lua = (await filesUnder(join(ROOT, "src"), ".lua")).map((f) => f.slice(f.lastIndexOf("/") + 1));
    expect(lua.length).toBeGreaterThan(0);
    const readers: string[] = [];
    for (const f of await filesUnder(join(image.dir, "dist"), ".js")) {
      if (!(await readFile(f, "utf8")).includes("./lua/")) continue;
      readers.push(f);
      for (const name of lua) expect((await stat(join(f, "..", "lua", name))).isFile()).toBe(true);
    }
    expect(readers.length).toBeGreaterThan(0);
  });

  it("imports at run time only Node's own modules (and two optional ones ws tries)", async () => {
    // The build's metafile: every import of every output, as esbuild resolved it.
    const { all: external, outsideNode: offenders } = runTimeImports(
      await readFile(join(work, "stages", "build", "dist", ".meta.json"), "utf8"),
    );
    expect(external.length).toBeGreaterThan(20);
    expect(offenders).toEqual([]);
    // `node:http`, `crypto`, `fs`, `util`, `net` and `process` are ES imports only where the AWS SDK
    // (loaded when AWS is called) imports their lazy exports by name: Node's ES view of each
    // evaluates those (its own undici, Web Crypto, the promises API, …) at every start. They are read through `require`
    // (deploy/build.ts).
    const esView = external.filter(
      (i) => /^(node:)?(http|crypto|fs|util|net|process)$/.test(i.path) && i.kind !== "require-call",
    );
    const meta = JSON.parse(
      await readFile(join(work, "stages", "build", "dist", ".meta.json"), "utf8"),
    ) as BuildMeta;
    const holdsSdk = (file: string) =>
      Object.keys(meta.outputs[file]?.inputs ?? {}).some((i) => /node_modules\/(@smithy|@aws-sdk)\//.test(i));
    expect(esView.filter((i) => !holdsSdk(i.file))).toEqual([]);
    expect(external.some((i) => /^(node:)?http$/.test(i.path))).toBe(true);
  });

  it("reads a clusters file from the terminal, and names a malformed one (its YAML parser loaded for it)", async () => {
    // deploy/build.ts evaluates the YAML parser only when UNSTUCK_CLUSTERS_FILE is set.
    const cli = async (clusters: string): Promise<{ code: number; out: string; err: string }> => {
      const file = join(writable, `clusters-${String(clusters.length)}.yaml`);
      await writeFile(file, clusters);
      return runFile(process.execPath, [join(image.dir, "dist", "src", "cli.js"), "help"], {
        cwd: image.dir,
        env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent", UNSTUCK_CLUSTERS_FILE: file },
      }).then(
        ({ stdout, stderr }) => ({ code: 0, out: stdout, err: stderr }),
        (e: unknown) => {
          const failed = e as { code: number; stdout: string; stderr: string };
          return { code: failed.code, out: failed.stdout, err: failed.stderr };
        },
      );
    };
    const good = await cli("clusters:\n  prod-eks: { region: eu-west-1 }\n");
    expect(good.code, good.err).toBe(0);
    expect(good.out).toContain("ns <namespace>");
    const bad = await cli("clusters: [\n");
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(
      /Invalid UNSTUCK_CLUSTERS_FILE: cannot read .*clusters-\d+\.yaml \(.*Flow sequence/,
    );
  });

  it("without Slack credentials says which variables to set and exits 2 (no sandbox in the image)", async () => {
    const run = start({});
    expect(await run.exited).toBe(2);
    expect(run.err()).toContain(
      "unstuck: Slack is not configured — missing SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET.",
    );
    expect(run.err()).not.toContain("sandbox instead");
    expect(run.err()).not.toMatch(/EACCES|EROFS|ERR_MODULE_NOT_FOUND|Error:/);
  });

  it("runs, from the build stage's dist/ as `npm start` does, the local sandbox without Slack credentials", async () => {
    // npm start = `node dist/src/main.js` after `npm run build`; the build stage is that checkout.
    const child = spawn(process.execPath, [join(work, "stages", "build", "dist", "src", "main.js")], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", REDIS_URL },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    const code = new Promise<number | null>((resolve) => child.once("close", resolve));
    child.stdin.end("/unstuck ns myapp\nquit\n");
    expect(await code, out).toBe(0);
    expect(out).toContain("Starting the local sandbox instead.");
    expect(out).toContain("== Namespace myapp: BLOCKED ==");
  }, 90_000);

  it("names a bad variable in one line and exits 2", async () => {
    const run = start({
      SLACK_BOT_TOKEN: "xoxb-1",
      SLACK_APP_TOKEN: "xapp-1",
      UNSTUCK_BOT_SIGNING_KEY: "short",
    });
    expect(await run.exited).toBe(2);
    expect(run.err()).toBe(
      "unstuck: Invalid UNSTUCK_BOT_SIGNING_KEY: not an Ed25519 private key (a PEM from `openssl genpkey -algorithm ed25519`, or the base64 seed `npm run unstuck -- keys` prints).\n",
    );
    const ops = start({ SLACK_BOT_TOKEN: "xoxb-1", SLACK_APP_TOKEN: "xapp-1", UNSTUCK_OPS_PORT: "http" });
    expect(await ops.exited).toBe(2);
    expect(ops.err()).toBe("unstuck: Invalid UNSTUCK_OPS_PORT: must be a port number (0-65535).\n");
  });

  it("with its dependencies unreachable, says which in one line and exits 1", async () => {
    const closed = await freePort();
    const kubeconfig = join(writable, "unreachable.kubeconfig");
    await writeFile(kubeconfig, kubeconfigFor(`http://127.0.0.1:${String(closed)}`), { mode: 0o644 });
    const run = start({
      SLACK_BOT_TOKEN: "xoxb-1",
      SLACK_APP_TOKEN: "xapp-1",
      SLACK_API_URL: `http://127.0.0.1:${String(closed)}/api/`,
      REDIS_URL: `redis://127.0.0.1:${String(closed)}`,
      KUBECONFIG: kubeconfig,
      ...keyEnv(),
      UNSTUCK_STARTUP_TIMEOUT_SECONDS: "5",
      UNSTUCK_OPS_PORT: "0",
    });
    expect(await run.exited).toBe(1);
    // src/startup.ts's Slack client logs its failed request through its default console logger
    // first (a line that does not belong there; reported); the answer is the one line after it.
    const lines = run
      .err()
      .trimEnd()
      .split("\n")
      .filter((l) => !l.startsWith("[WARN]  web-api:WebClient:"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^unstuck: cannot start: /);
    expect(lines[0]).toContain(`Redis at 127.0.0.1:${String(closed)} is unreachable (ECONNREFUSED)`);
    expect(lines[0]).toContain("the Kubernetes API at");
    expect(lines[0]).toContain("Slack (");
  });

  describe("with its dependencies up (kube simulator, fake Slack in Socket Mode, Redis)", () => {
    let sim: KubeSim;
    let fake: FakeSlack;
    let redis: Redis;
    const prefix = uniquePrefix("image");
    const channel = "C0IMAGE01";

    beforeAll(async () => {
      sim = await startKubeSim({ scenario: "test/fixtures/scenarios/seed-incident.yaml" });
      fake = await startFakeSlack({ token: `xoxb-image-${randomBytes(8).toString("hex")}` });
      redis = client();
    });
    afterAll(async () => {
      await deleteKeysWithPrefix(redis, prefix);
      await redis.quit();
      await fake.stop();
      await sim.stop();
    });

    it("becomes ready, answers a command over Socket Mode, serves metrics, and stops cleanly on SIGTERM", async () => {
      const kubeconfig = join(writable, "sim.kubeconfig");
      await sim.writeKubeconfig(kubeconfig);
      await chmod(kubeconfig, 0o644);
      const [httpPort, opsPort] = [await freePort(), await freePort()];
      const run = start({
        SLACK_BOT_TOKEN: fake.token,
        SLACK_APP_TOKEN: fake.appToken,
        SLACK_API_URL: fake.url,
        PORT: String(httpPort),
        REDIS_URL,
        UNSTUCK_REDIS_PREFIX: prefix,
        UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
        KUBECONFIG: kubeconfig,
        UNSTUCK_CHANNELS: channel,
        ...keyEnv(),
        UNSTUCK_OPS_PORT: String(opsPort),
        UNSTUCK_OPS_HOST: "127.0.0.1",
        UNSTUCK_LOG_LEVEL: "warn",
      });
      try {
        const ops = `http://127.0.0.1:${String(opsPort)}`;
        const ready = await eventually(
          async () => {
            if (run.child.exitCode !== null) throw new Error(`exited: ${run.err()}`);
            const res = await fetch(`${ops}/readyz`).catch(() => undefined);
            return res?.status === 200 ? ((await res.json()) as { checks: { name: string }[] }) : undefined;
          },
          60_000,
          "/readyz 200",
        );
        expect(ready.checks.map((c) => c.name)).toEqual(["redis", "kubernetes", "slack"]);
        expect((await fetch(`${ops}/healthz`)).status).toBe(200);
        // Bolt's own health route on PORT, as in HTTP mode.
        expect((await fetch(`http://127.0.0.1:${String(httpPort)}/healthz`)).status).toBe(200);

        const envelope = slashCommandEnvelope(`env-image-${randomBytes(4).toString("hex")}`, {
          text: "ns myapp",
          channelId: channel,
          responseUrl: fake.responseUrl("image-ns"),
        });
        await fake.waitForSocket(1, 10_000);
        fake.socketSend(envelope);
        await fake.waitForAck(envelope.envelope_id, 5_000);
        const post = await fake.waitFor("chat.postMessage", (c) => c.body["channel"] === channel, 30_000);
        expect(JSON.stringify(post.body)).toContain("myapp-worker-ingress");

        const metrics = await (await fetch(`${ops}/metrics`)).text();
        expect(metrics).toContain("unstuck_ready 1");
        expect(metrics).toMatch(/^unstuck_jobs\{queue="actions",state="waiting"\} \d+$/m);
        expect(metrics).toMatch(/^process_resident_memory_bytes \d+$/m);
        // Which build answers: package.json's version, the revision built from, Node's version.
        const { version } = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as {
          version: string;
        };
        expect(metrics).toContain(
          `unstuck_build_info{version="${version}",revision="${REVISION}",node_version="${process.version}"} 1`,
        );
        // The Kubernetes API requests the bot made to answer: counted by verb and code, and timed.
        expect(metrics).toMatch(/^unstuck_kube_api_requests_total\{verb="get",code="OK"\} [1-9]\d*$/m);
        expect(metrics).toMatch(/^unstuck_kube_api_request_duration_seconds_count\{verb="get"\} [1-9]\d*$/m);

        run.child.kill("SIGTERM");
        expect(await run.exited).toBe(0);
        expect(run.err()).not.toMatch(/EACCES|EROFS/);
      } finally {
        if (run.child.exitCode === null) run.child.kill("SIGKILL");
      }
    }, 120_000);

    it("answers from the terminal through a cluster's HTTP or SOCKS5 proxy (its proxy code loaded for it)", async () => {
      // deploy/build.ts evaluates client-node's proxy agents and SOCKS client only when a kubeconfig
      // names a proxy-url: through each kind of proxy, the bundled CLI still answers.
      for (const proxy of [await startHttpProxy(), await startSocks5Proxy()]) {
        try {
          const kubeconfig = join(
            writable,
            `proxied-${new URL(proxy.url).protocol.replace(":", "")}.kubeconfig`,
          );
          await writeFile(
            kubeconfig,
            sim
              .kubeconfig()
              .replace(`server: ${sim.url}`, `server: ${sim.url}\n      proxy-url: ${proxy.url}`),
          );
          const { stdout } = await runFile(
            process.execPath,
            [join(image.dir, "dist", "src", "cli.js"), "ns", "myapp", "--json", "--kubeconfig", kubeconfig],
            { cwd: image.dir, env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent", TMPDIR: writable } },
          );
          const d = JSON.parse(stdout) as { verdict: string; blockers: unknown[] };
          expect(d.verdict, proxy.url).toBe("blocked");
          expect(d.blockers.length).toBeGreaterThan(0);
          expect(new Set(proxy.targets), proxy.url).toEqual(new Set([new URL(sim.url).host]));
        } finally {
          await proxy.stop();
        }
      }
    }, 60_000);

    it("answers from the terminal a cluster served over TLS, refuses an unknown CA, and loads no TLS for plain HTTP", async () => {
      // deploy/build.ts loads `https` and `tls` when the first https cluster is asked for: through a
      // TLS front signed by a private CA, named in the kubeconfig as EKS's is, the bundled CLI answers.
      const front = await startTlsFront(sim.url);
      const loaded = join(writable, "modules-loaded.txt");
      const preload = join(writable, "record-modules.cjs");
      await writeFile(
        preload,
        `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(loaded)}, process.moduleLoadList.join("\\n")));\n`,
      );
      const env = { PATH: process.env.PATH ?? "", HOME: "/nonexistent", TMPDIR: writable };
      const cli = (kubeconfig: string, extra: Record<string, string> = {}) =>
        runFile(
          process.execPath,
          [join(image.dir, "dist", "src", "cli.js"), "ns", "myapp", "--json", "--kubeconfig", kubeconfig],
          { cwd: image.dir, env: { ...env, ...extra } },
        );
      try {
        const overTls = (ca: string) =>
          sim
            .kubeconfig()
            .replace(`server: ${sim.url}`, `server: ${front.url}`)
            .replace(/insecure-skip-tls-verify: true/, `certificate-authority-data: ${ca}`);
        const trusted = join(writable, "tls.kubeconfig");
        await writeFile(trusted, overTls(Buffer.from(front.ca).toString("base64")));
        const { stdout } = await cli(trusted, { NODE_OPTIONS: `--require ${preload}` });
        const d = JSON.parse(stdout) as { verdict: string; blockers: unknown[] };
        expect(d.verdict).toBe("blocked");
        expect(d.blockers.length).toBeGreaterThan(0);
        expect(front.forwarded()).toBeGreaterThan(2);
        expect((await readFile(loaded, "utf8")).split("\n")).toContain("NativeModule tls");

        // Another CA: the certificate is refused, and nothing is answered from the cluster.
        const stranger = await startTlsFront(sim.url);
        const untrusted = join(writable, "tls-other-ca.kubeconfig");
        await writeFile(untrusted, overTls(Buffer.from(stranger.ca).toString("base64")));
        await stranger.stop();
        const before = front.forwarded();
        const refused = await cli(untrusted).then(
          () => undefined,
          (err: unknown) => err as { code?: number; stdout?: string; stderr?: string },
        );
        expect(refused?.code).toBe(1);
        expect(`${refused?.stdout ?? ""}${refused?.stderr ?? ""}`).toMatch(/certificate/i);
        expect(front.forwarded()).toBe(before);
      } finally {
        await front.stop();
      }

      // The same command against a plain-HTTP API server with a token evaluates neither TLS nor
      // `https`, nor Node's crypto (no hash of the connection options, no Redis script) or
      // child_process (client-node's exec credentials, for a kubeconfig without any).
      const plain = join(writable, "plain.kubeconfig");
      await writeFile(plain, sim.kubeconfig());
      const { stdout } = await cli(plain, { NODE_OPTIONS: `--require ${preload}` });
      expect((JSON.parse(stdout) as { verdict: string }).verdict).toBe("blocked");
      const modules = (await readFile(loaded, "utf8")).split("\n");
      expect(modules).toContain("NativeModule http");
      expect(
        modules.filter((m) =>
          /^NativeModule (tls|https|_tls_wrap|readline|vm|dns|crypto|child_process)$/.test(m),
        ),
      ).toEqual([]);
    }, 60_000);

    it("answers from the terminal with a kubeconfig's exec credentials, as `aws eks get-token` gives them", async () => {
      // The plugin runs once for the burst of requests a cold command sends at once (each asks for
      // credentials), and its token is the one sent. client-node keeps `child_process.spawn` from its
      // constructor: the build hands it a stand-in that loads child_process when called.
      const token = /token: (\S+)/.exec(sim.kubeconfig())?.[1];
      expect(token).toBeDefined();
      const calls = join(writable, "get-token-calls");
      const plugin = join(writable, "get-token.sh");
      await writeFile(
        plugin,
        [
          "#!/bin/sh",
          `echo "$@" >> ${calls}`,
          `echo '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"${token ?? ""}"}}'`,
          "",
        ].join("\n"),
        { mode: 0o755 },
      );
      const kubeconfig = join(writable, "exec.kubeconfig");
      await writeFile(
        kubeconfig,
        sim
          .kubeconfig()
          .replace(
            /token: \S+/,
            [
              "exec:",
              "        apiVersion: client.authentication.k8s.io/v1beta1",
              `        command: ${plugin}`,
              "        args: [eks, get-token, --cluster-name, prod-eks]",
              "        interactiveMode: Never",
            ].join("\n"),
          ),
      );
      const ns = () =>
        runFile(
          process.execPath,
          [join(image.dir, "dist", "src", "cli.js"), "ns", "myapp", "--json", "--kubeconfig", kubeconfig],
          { cwd: image.dir, env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent", TMPDIR: writable } },
        );
      const { stdout } = await ns();
      expect((JSON.parse(stdout) as { verdict: string }).verdict).toBe("blocked");
      expect((await readFile(calls, "utf8")).trim().split("\n")).toEqual([
        "eks get-token --cluster-name prod-eks",
      ]);

      // A plugin that fails: the answer names the plugin and its words (trimmed), and nothing is
      // read from the cluster.
      await writeFile(plugin, "#!/bin/sh\necho 'token expired' >&2\nexit 3\n", { mode: 0o755 });
      const before = sim.requests().length;
      const failed = await ns().then(
        () => undefined,
        (err: unknown) => err as { code?: number; stdout?: string },
      );
      expect(failed?.code).toBe(1);
      const error = (JSON.parse(failed?.stdout ?? "{}") as { error?: { code: string; message: string } })
        .error;
      expect(error?.code).toBe("UPSTREAM");
      expect(error?.message).toBe(
        `The kubeconfig's user unstuck: its credentials plugin \`${plugin}\` failed: token expired`,
      );
      expect(sim.requests().length).toBe(before);
    }, 60_000);

    it("stops cleanly on a SIGTERM at any moment of start-up, leaving no job in hand", async () => {
      const kubeconfig = join(writable, "sim-early.kubeconfig");
      await sim.writeKubeconfig(kubeconfig);
      await chmod(kubeconfig, 0o644);
      const shutdownSeconds = 5;
      const early = `${prefix}early:`;
      const outcomes: string[] = [];
      // From before node has run a line (tini itself is up within milliseconds) to after the workers
      // have started: each moment once.
      for (const delayMs of [30, 100, 300, 600, 1_000, 1_800, 3_000]) {
        const run = start({
          SLACK_BOT_TOKEN: fake.token,
          SLACK_APP_TOKEN: fake.appToken,
          SLACK_API_URL: fake.url,
          PORT: String(await freePort()),
          REDIS_URL,
          UNSTUCK_REDIS_PREFIX: early,
          UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
          KUBECONFIG: kubeconfig,
          UNSTUCK_CHANNELS: channel,
          ...keyEnv(),
          UNSTUCK_SHUTDOWN_TIMEOUT_SECONDS: String(shutdownSeconds),
          UNSTUCK_LOG_LEVEL: "info",
        });
        try {
          await new Promise((r) => setTimeout(r, delayMs));
          const sent = Date.now();
          run.child.kill("SIGTERM");
          const code = await run.exited;
          const elapsedMs = Date.now() - sent;
          const said = run.out();
          const moment = said.includes("unstuck is running")
            ? "running"
            : said.includes("stopped during start-up")
              ? "start-up"
              : run.err().includes("while loading; nothing was started")
                ? "loading"
                : "before node";
          outcomes.push(`${String(delayMs)} ms: ${moment} (${String(elapsedMs)} ms to exit)`);
          // tini passes the signal on and exits with node's code: 0 once node listens (its first
          // module's first line, before the bot is loaded), 143 (killed by SIGTERM) only before node
          // has run a line of the bot, when nothing was started.
          expect(code, `${String(delayMs)} ms: ${run.err()}`).toBe(moment === "before node" ? 143 : 0);
          expect(elapsedMs).toBeLessThan(shutdownSeconds * 1000 + 2_000);
          expect(run.err()).not.toMatch(/Error|EACCES|EROFS/);
          // One JSON object per line, its level by name (what log pipelines filter on).
          for (const line of said
            .trim()
            .split("\n")
            .filter((l) => l !== "")) {
            const record = JSON.parse(line) as { level?: unknown; msg?: unknown };
            expect(["trace", "debug", "info", "warn", "error", "fatal"], line).toContain(record.level);
          }
        } finally {
          if (run.child.exitCode === null) run.child.kill("SIGKILL");
        }
        // Nothing in hand: no job left active under a lock that only its expiry would free.
        for (const key of await redis.keys(`${early}*:active`)) expect(await redis.llen(key), key).toBe(0);
      }
      // The sweep saw start-up from both sides of the moment node starts listening.
      expect(
        outcomes.some((o) => o.includes(": loading") || o.includes(": start-up")),
        outcomes.join("; "),
      ).toBe(true);
      console.log(`SIGTERM during start-up: ${outcomes.join("; ")}`);
      await deleteKeysWithPrefix(redis, early);
    }, 180_000);
  });
});

async function makeReadOnly(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const p = join(entry.parentPath, entry.name);
    if (entry.isSymbolicLink()) continue;
    await chmod(p, entry.isDirectory() ? 0o555 : 0o444);
  }
  await chmod(dir, 0o555);
}

async function makeWritable(dir: string): Promise<void> {
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isDirectory()) await chmod(join(entry.parentPath, entry.name), 0o755);
  }
}
