/**
 * `npm run build`: the bot and the CLI bundled by esbuild into `dist/` — what `npm start`,
 * `npm run unstuck` and the image run.
 *
 * Why a bundle rather than tsc's one file per module: at run time only the code reachable from the
 * entry points is loaded, once, from a few files. @kubernetes/client-node's `KubeConfig` alone
 * imports ~1,000 generated modules, and @aws-sdk/client-ec2 builds the schema of every one of
 * EC2's ~700 operations when imported; bundled from their ES builds (`module` before `main`) with
 * tree shaking, only what the bot calls remains. That is what brings a ready bot with AWS
 * configured under 200 MiB and the terminal's start-up well under a second (`npm run bench --
 * memory ns`). Type checking stays with `npm run typecheck` (part of `npm test`).
 *
 * Layout (the entry points keep the paths the image, the chart and the docs name):
 *   dist/src/main.js, dist/src/cli.js   entry points
 *   dist/test/sim/sandbox.js            the local sandbox: `src/start-bot.ts` imports it at run time by its
 *                                       relative path, so an image that ships only `dist/src` and
 *                                       `dist/chunks` fails that import and says what to configure
 *   dist/chunks/*.js                    code shared by the entry points and loaded lazily
 * The Lua scripts (`src/redis/lua/`) are read beside the module that reads them (`./lua/`), so they
 * are copied next to every output file that does.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { build, type Metafile, type Plugin } from "esbuild";

const ROOT = process.cwd();
const DIST = join(ROOT, "dist");
/**
 * Built beside `dist/` and then swapped in with two renames: a process started from `dist/` during
 * the build (a second terminal) finds the whole old tree, never a half-written one, and a failed
 * build leaves the last good one. (A bot that started before and imports a module lazily after the
 * swap may not find it under the new hashed names: restart it after a rebuild.)
 */
const OUT = join(ROOT, `dist.building-${String(process.pid)}`);
const LUA = join(ROOT, "src", "redis", "lua");

/** `src/start-bot.ts`'s import of the sandbox stays an import of `dist/test/sim/sandbox.js`, not a copy of it. */
const sandboxAtRunTime: Plugin = {
  name: "sandbox-at-run-time",
  setup(b) {
    b.onResolve({ filter: /\/test\/sim\/sandbox\.js$/ }, (args) =>
      args.importer.endsWith(join("src", "start-bot.ts")) ? { path: args.path, external: true } : undefined,
    );
  },
};

/**
 * The sandbox's simulators (test/sim) validate their scenario files with zod's full build; the
 * product's configuration uses `zod/mini` (src/config/zod.ts). Both builds are made of zod's core
 * modules, and tree-shaking is one for the whole build: the full build's use would keep all of the
 * core (~450 KB) in the chunk every command loads. The simulators get zod's CommonJS files instead,
 * a module graph of their own that only the sandbox loads.
 */
const zodForSimulators: Plugin = {
  name: "zod-for-simulators",
  setup(b) {
    const cjs = createRequire(import.meta.url).resolve("zod");
    b.onResolve({ filter: /^zod$/ }, (args) =>
      args.importer.includes(`${join("test", "sim")}/`) ? { path: cjs } : undefined,
    );
  },
};

/**
 * Node's built-ins that are costly as ES modules, read through `require` instead. Node builds an ES
 * module's view of a built-in by reading every export, and some exports are lazy: `http`'s (the
 * `fetch` family) load Node's own copy of undici (+23 ms on every start, paid by client-node's
 * `import http from "node:http"`); `fs`'s load its promises API with readline
 * and the REPL's history, `util`'s, `net`'s and `process`'s their own; a view costs up to 10 ms
 * where `require` costs nothing.
 * The view below exports the module as its default and every export that is a plain value (read at
 * build time), and never touches the lazy ones; a lazy export imported by name fails the build.
 */
const BUILTINS_THROUGH_REQUIRE = ["http", "fs", "util", "net", "process"] as const;
/**
 * The AWS SDK imports lazy exports by name (`fs.promises`, `crypto.getRandomValues`); it keeps Node's
 * ES view, evaluated only when a command calls AWS (the SDK itself is loaded then).
 */
const LAZY_EXPORT_IMPORTERS = /node_modules[\\/](@smithy|@aws-sdk)[\\/]/;

const builtinsThroughRequire: Plugin = {
  name: "builtins-through-require",
  setup(b) {
    const load = createRequire(import.meta.url);
    const plainExports = (name: string): string[] =>
      Object.entries(Object.getOwnPropertyDescriptors(load(`node:${name}`) as object))
        .filter(([key, d]) => d.get === undefined && /^[A-Za-z_$][\w$]*$/.test(key) && key !== "default")
        .map(([key]) => key);
    const filter = new RegExp(`^(node:)?(${BUILTINS_THROUGH_REQUIRE.join("|")})$`);
    // Only ES imports: a bundled CommonJS `require("node:http")` stays Node's own `require`.
    b.onResolve({ filter }, (args) =>
      (args.kind === "import-statement" || args.kind === "dynamic-import") &&
      !LAZY_EXPORT_IMPORTERS.test(args.importer)
        ? { path: `node:${args.path.replace(/^node:/, "")}`, namespace: "unstuck-builtin" }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "unstuck-builtin" }, (args) => ({
      contents: [
        'import { createRequire } from "node:module";',
        `const builtin = createRequire(import.meta.url)(${JSON.stringify(args.path)});`,
        "export default builtin;",
        `export const { ${plainExports(args.path.replace(/^node:/, "")).join(", ")} } = builtin;`,
      ].join("\n"),
      loader: "js",
    }));
  },
};

/** A function called, never constructed, with no property of its own: a stand-in may forward to it. */
function plainFunction(name: string, value: unknown): boolean {
  if (typeof value !== "function" || !/^[a-z]/.test(name)) return false;
  const own = Object.getOwnPropertyNames(value).filter((k) => !["length", "name", "prototype"].includes(k));
  return own.length === 0 && Object.getOwnPropertySymbols(value).length === 0;
}

/**
 * Node's built-ins a terminal command may never call, loaded on first use: TLS and `https` (a
 * cluster reached over plain HTTP: `kubectl proxy`, a local cluster), `crypto` (the bot's hashes,
 * keys and ids: ~10 ms to load, which a terminal's `ns` never calls), `child_process` (a
 * kubeconfig's exec plugin), `zlib` (an answer the server compressed), and what client-node's
 * watch, JSONPath and proxy agents import (`readline`, `vm`, `dns`). An ES import of a built-in is
 * evaluated with the importer's chunk, ~29 ms of every start for these together. Each import gets
 * a CommonJS stand-in whose exports (their names read at build time) are getters that `require`
 * the real module on first read: a namespace or default import reads through them, and a named
 * import is read where it is used. A plain function read before the module is loaded (client-node's
 * `ExecAuth` keeps `child_process.spawn` from its constructor, on every start) is handed a stand-in
 * that loads the module when called; a function carrying properties of its own (`exec` and its
 * `promisify.custom`) or a class is read from the real module. The AWS SDK keeps its own imports
 * (it loads when AWS is called).
 */
const ON_FIRST_CALL_BUILTINS = [
  "https",
  "tls",
  "crypto",
  "child_process",
  "zlib",
  "readline",
  "vm",
  "dns",
] as const;
const builtinsOnFirstCall: Plugin = {
  name: "builtins-on-first-call",
  setup(b) {
    const load = createRequire(import.meta.url);
    const filter = new RegExp(`^(node:)?(${ON_FIRST_CALL_BUILTINS.join("|")})$`);
    b.onResolve({ filter }, (args) =>
      (args.kind === "import-statement" || args.kind === "dynamic-import") &&
      !LAZY_EXPORT_IMPORTERS.test(args.importer)
        ? { path: `node:${args.path.replace(/^node:/, "")}`, namespace: "unstuck-on-first-call" }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "unstuck-on-first-call" }, (args) => {
      const real = load(args.path) as Record<string, unknown>;
      const names = Object.keys(real).filter((k) => /^[A-Za-z_$][\w$]*$/.test(k));
      const calls = names.filter((k) => plainFunction(k, real[k]));
      return {
        contents: [
          "let real;",
          `const builtin = () => (real ??= require(${JSON.stringify(args.path)}));`,
          "const forwarders = new Map();",
          "const forwarder = (name) => ({ [name](...args) { return builtin()[name].apply(this, args); } })[name];",
          `const calls = new Set(${JSON.stringify(calls)});`,
          `for (const name of ${JSON.stringify(names)})`,
          "  Object.defineProperty(exports, name, {",
          "    enumerable: true,",
          "    get: () =>",
          "      real === undefined && calls.has(name)",
          "        ? forwarders.get(name) ?? forwarders.set(name, forwarder(name)).get(name)",
          "        : builtin()[name],",
          "  });",
        ].join("\n"),
        loader: "js",
      };
    });
  },
};

/**
 * undici as it is used, and only once it is: its `Agent` and `ProxyAgent` (the connection pools,
 * client-node's and `src/kube/pool.ts`), the request API on every dispatcher (`dispatcher.request`,
 * `src/kube/wire.ts`, through a proxy), the global dispatcher, and `fetch` (client-node's `Watch`,
 * the bot's watches) — for ES imports of `undici` (client-node's and ours). Nothing of it is
 * evaluated until one of them is first called or constructed: a terminal that reaches its cluster
 * directly (Node's own client) never evaluates undici, whose load was a fifth of a cold CLI's
 * start-up. undici's index is CommonJS and cannot be tree-shaken: it evaluates its fetch, WebSocket,
 * EventSource, cache, mock and interceptor modules on import. Another name imported so fails the
 * build (no such export), never the run; a CommonJS `require("undici")` (Slack's Socket Mode client,
 * its WebSocket) gets undici whole.
 */
const undiciAsUsed: Plugin = {
  name: "undici-as-used",
  setup(b) {
    b.onResolve({ filter: /^undici$/ }, (args) =>
      args.kind === "import-statement" ? { path: "undici", namespace: "unstuck-undici" } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "unstuck-undici" }, () => ({
      contents: [
        "let loaded;",
        "function undici() {",
        "  if (loaded === undefined) {",
        '    const Dispatcher = require("undici/lib/dispatcher/dispatcher.js");',
        // What undici's index does: the request API as methods of every dispatcher.
        '    Object.assign(Dispatcher.prototype, require("undici/lib/api/index.js"));',
        "    loaded = {",
        '      Agent: require("undici/lib/dispatcher/agent.js"),',
        '      ProxyAgent: require("undici/lib/dispatcher/proxy-agent.js"),',
        '      global: require("undici/lib/global.js"),',
        "    };",
        "  }",
        "  return loaded;",
        "}",
        // A constructor that returns an object gives that object: undici's own instance.
        "export class Agent { constructor(options) { return new (undici().Agent)(options); } }",
        "export class ProxyAgent { constructor(options) { return new (undici().ProxyAgent)(options); } }",
        "export function getGlobalDispatcher() { return undici().global.getGlobalDispatcher(); }",
        "export function fetch(input, init) {",
        "  undici();",
        '  return require("undici/lib/web/fetch/index.js").fetch(input, init);',
        "}",
      ].join("\n"),
      resolveDir: ROOT,
      loader: "js",
    }));
  },
};

/**
 * Packages imported for one rarely used option, evaluated only when it is used. Each stand-in below
 * constructs or calls the real export on first use (a constructor that returns an object gives that
 * object), `require`d then from the same bundle; another name imported fails the build.
 * - client-node's proxy support, for a kubeconfig that names a `proxy-url`: its `config.js` imports
 *   `hpagent`, `socks-proxy-agent` and `socks` (with `ip-address`, `smart-buffer`, `agent-base` and
 *   `debug`), whose evaluation cost every terminal command that reads a kubeconfig ~5 ms.
 * - `yaml`, for `UNSTUCK_CLUSTERS_FILE` (src/config/clusters.ts): ~2 ms of every start without one.
 */
/** Where client-node's modules are, as an importer's path holds it. */
const CLIENT_NODE = join("node_modules", "@kubernetes", "client-node", "dist") + "/";
const ON_FIRST_USE: Readonly<Record<string, { readonly importer: string; readonly contents: string }>> = {
  hpagent: {
    importer: CLIENT_NODE,
    contents: [
      "export class HttpProxyAgent { constructor(...a) { return new (require('hpagent').HttpProxyAgent)(...a); } }",
      "export class HttpsProxyAgent { constructor(...a) { return new (require('hpagent').HttpsProxyAgent)(...a); } }",
    ].join("\n"),
  },
  "socks-proxy-agent": {
    importer: CLIENT_NODE,
    contents:
      "export class SocksProxyAgent { constructor(...a) { return new (require('socks-proxy-agent').SocksProxyAgent)(...a); } }",
  },
  socks: {
    importer: CLIENT_NODE,
    contents:
      "export const SocksClient = { createConnection: (...a) => require('socks').SocksClient.createConnection(...a) };",
  },
  yaml: {
    importer: join("src", "config") + "/",
    contents: "export function parse(...a) { return require('yaml').parse(...a); }",
  },
};
const onFirstUse: Plugin = {
  name: "on-first-use",
  setup(b) {
    b.onResolve({ filter: new RegExp(`^(${Object.keys(ON_FIRST_USE).join("|")})$`) }, (args) =>
      args.kind === "import-statement" && args.importer.includes(ON_FIRST_USE[args.path]?.importer ?? "\0")
        ? { path: args.path, namespace: "unstuck-on-first-use" }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "unstuck-on-first-use" }, (args) => ({
      contents: ON_FIRST_USE[args.path]?.contents ?? "",
      resolveDir: ROOT,
      loader: "js",
    }));
  },
};

/**
 * @kubernetes/client-node's modules marked free of side effects (its `polyfill.js` excepted, the one
 * module it imports for one), as its package.json does not say: its index re-exports the generated
 * API clients and ~1,000 model classes, and without this mark the bundle kept every one of them
 * although the bot uses only `KubeConfig`, `Watch` and `ApiException` (`src/kube/transport.ts`).
 * Only modules none of whose exports are used are dropped; test/deploy/image.test.ts checks from
 * the metafile that no generated client or model is bundled.
 */
const clientNodeWithoutSideEffects: Plugin = {
  name: "client-node-without-side-effects",
  setup(b) {
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData === CLIENT_NODE_RESOLVING) return undefined;
      if (!args.importer.includes(CLIENT_NODE) && !args.path.startsWith("@kubernetes/client-node"))
        return undefined;
      const r = await b.resolve(args.path, {
        importer: args.importer,
        kind: args.kind,
        resolveDir: args.resolveDir,
        pluginData: CLIENT_NODE_RESOLVING,
      });
      if (r.errors.length > 0 || !r.path.includes(CLIENT_NODE)) return undefined;
      return { ...r, sideEffects: r.path.endsWith(`${CLIENT_NODE}polyfill.js`) };
    });
  },
};
const CLIENT_NODE_RESOLVING = Symbol("client-node resolving");

/**
 * One build at a time (`npm start` in one terminal, `npm run unstuck` in another): a lock directory
 * holding the builder's pid; a lock whose process is gone is taken over.
 */
const LOCK = join(ROOT, "dist.lock");
async function lock(): Promise<void> {
  const until = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, "pid"), String(process.pid));
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    let holder = 0;
    try {
      holder = Number(readFileSync(join(LOCK, "pid"), "utf8")) || 0;
    } catch {
      // Taken a moment ago, its pid not written yet.
    }
    let alive = true;
    try {
      if (holder > 0) process.kill(holder, 0);
      // No pid after 10 s: a builder that died between the two steps.
      else alive = Date.now() - statSync(LOCK).mtimeMs < 10_000;
    } catch {
      alive = false;
    }
    if (!alive) rmSync(LOCK, { recursive: true, force: true });
    else if (Date.now() > until) throw new Error(`build: ${LOCK} is held by process ${String(holder)}`);
    else await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

await lock();
const started = performance.now();
/**
 * The npm packages (`name@version`) the image's code holds: every `node_modules` input esbuild put
 * bytes of into an output the image ships (all but the sandbox's own entry under `test/`).
 */
function bundledPackages(meta: Metafile): Set<string> {
  const packages = new Set<string>();
  for (const [file, output] of Object.entries(meta.outputs)) {
    if (file.includes("/test/sim/")) continue;
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const at = input.lastIndexOf("node_modules/");
      if (at < 0 || bytesInOutput === 0) continue;
      const [first = "", second = ""] = input.slice(at + "node_modules/".length).split("/");
      const name = first.startsWith("@") ? `${first}/${second}` : first;
      const manifest = join(ROOT, input.slice(0, at), "node_modules", name, "package.json");
      packages.add(`${name}@${(JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version}`);
    }
  }
  return packages;
}

/**
 * `sbom.cdx.json`: a CycloneDX SBOM of exactly the packages bundled — npm's own (`npm sbom`: the
 * lockfile's packages with their licences and hashes) cut to {@link bundledPackages}. Not only the
 * production ones: the bundle also holds what the lockfile marks dev or optional but the code
 * reaches (yaml, semver, debug, @opentelemetry/api…).
 * The bundle carries no node_modules or lockfile, so this is what a scanner (Trivy, Grype, Syft)
 * reads of the image; it is also published beside it.
 */
function writeSbom(meta: Metafile, dir: string): number {
  const bundled = bundledPackages(meta);
  const npm = JSON.parse(
    execFileSync("npm", ["sbom", "--sbom-format", "cyclonedx", "--package-lock-only"], {
      cwd: ROOT,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    }),
  ) as {
    metadata: { component?: Record<string, unknown> };
    components: { "bom-ref": string }[];
    dependencies?: { ref: string; dependsOn?: string[] }[];
  };
  const components = npm.components.filter((c) => bundled.has(c["bom-ref"]));
  const known = new Set(components.map((c) => c["bom-ref"]));
  const missing = [...bundled].filter((p) => !known.has(p));
  if (missing.length > 0) throw new Error(`build: bundled but not in npm's SBOM: ${missing.join(", ")}`);
  const ref = npm.metadata.component?.["bom-ref"];
  const root = typeof ref === "string" ? ref : "";
  const sbom = {
    ...npm,
    metadata: {
      ...npm.metadata,
      component: { ...npm.metadata.component, type: "application", name: "unstuck" },
    },
    components,
    dependencies: (npm.dependencies ?? [])
      .filter((d) => d.ref === root || known.has(d.ref))
      .map((d) => ({ ...d, dependsOn: (d.dependsOn ?? []).filter((r) => known.has(r)) })),
  };
  writeFileSync(join(dir, "sbom.cdx.json"), `${JSON.stringify(sbom, null, 2)}\n`);
  return components.length;
}

const startedAt = new Date();
const old = `${DIST}.old-${String(process.pid)}`;
rmSync(OUT, { recursive: true, force: true });
try {
  const result = await build({
    entryPoints: ["src/main.ts", "src/cli.ts", "test/sim/sandbox.ts"],
    outdir: OUT,
    outbase: ROOT,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node24",
    // ES builds first: they tree-shake (the AWS SDK's CommonJS build is one file holding every operation).
    mainFields: ["module", "main"],
    chunkNames: "chunks/[name]-[hash]",
    minify: process.env.UNSTUCK_BUILD_MINIFY !== "0",
    keepNames: true,
    sourcemap: "linked",
    // Bundled CommonJS code calls `require` for Node's own modules; ES output has none of its own.
    banner: {
      js: "import { createRequire as __unstuckCreateRequire } from 'node:module'; const require = __unstuckCreateRequire(import.meta.url);",
    },
    // Optional native speed-ups of `ws` (client-node's exec/attach), not installed.
    external: ["bufferutil", "utf-8-validate"],
    plugins: [
      sandboxAtRunTime,
      clientNodeWithoutSideEffects,
      builtinsThroughRequire,
      builtinsOnFirstCall,
      undiciAsUsed,
      onFirstUse,
      zodForSimulators,
    ],
    legalComments: "linked",
    logLevel: "warning",
    metafile: true,
  });

  const outputs = Object.keys(result.metafile.outputs).filter((f) => f.endsWith(".js"));
  let luaCopies = 0;
  for (const file of outputs) {
    const path = join(ROOT, file);
    if (!readFileSync(path, "utf8").includes("./lua/")) continue;
    const dir = join(dirname(path), "lua");
    mkdirSync(dir, { recursive: true });
    for (const lua of readdirSync(LUA).filter((f) => f.endsWith(".lua")))
      copyFileSync(join(LUA, lua), join(dir, lua));
    luaCopies++;
  }
  if (luaCopies === 0) throw new Error("build: no output reads ./lua/ — the Redis scripts would be missing");
  const bytes = outputs.reduce((n, f) => n + readFileSync(join(ROOT, f)).length, 0);
  // What every output imports (test/deploy/image.test.ts: nothing outside Node's own modules at run time).
  // Named as they will be, under dist/ (they were written to the building directory).
  writeFileSync(
    join(OUT, ".meta.json"),
    JSON.stringify(result.metafile).replaceAll(`${relative(ROOT, OUT)}/`, `${relative(ROOT, DIST)}/`),
  );
  const sbomPackages = writeSbom(result.metafile, OUT);
  // Stamped with the build's start: a source saved while it ran is newer, so the next run rebuilds.
  writeFileSync(join(OUT, ".built"), "");
  utimesSync(join(OUT, ".built"), startedAt, startedAt);
  // The swap: the old tree moves aside in one rename and the new one takes its place in another.
  if (existsSync(DIST)) renameSync(DIST, old);
  renameSync(OUT, DIST);
  rmSync(old, { recursive: true, force: true });
  process.stderr.write(
    `unstuck: built ${String(outputs.length)} files (${(bytes / 2 ** 20).toFixed(1)} MiB, ${String(sbomPackages)} npm packages in sbom.cdx.json) in ${relative(ROOT, DIST)}/ in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  );
} catch (err) {
  // The last good tree stays (or comes back, had the swap got halfway).
  if (!existsSync(DIST) && existsSync(old)) renameSync(old, DIST);
  rmSync(OUT, { recursive: true, force: true });
  throw err;
} finally {
  rmSync(LOCK, { recursive: true, force: true });
}
