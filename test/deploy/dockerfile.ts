/**
 * The Dockerfile, carried out without Docker (no daemon or base image is needed): each stage is a
 * directory standing for its WORKDIR (/app), `COPY` copies from the checkout or from an earlier
 * stage, and the few `RUN` commands the Dockerfile uses are performed with the same npm commands.
 * A `RUN` it does not know fails the test, so the Dockerfile cannot grow a step the test skips.
 * `COPY` from the build context sees only what `.dockerignore` lets into the context, as Docker's
 * does: a file the Dockerfile needs and the ignore file leaves out fails here as `docker build` would.
 */
import { execFile } from "node:child_process";
import { builtinModules } from "node:module";
import { cp, mkdir, readFile, symlink } from "node:fs/promises";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";

export interface Instruction {
  readonly op: string;
  readonly args: string;
}

export interface Stage {
  readonly name: string;
  readonly from: string;
  readonly instructions: readonly Instruction[];
}

/** Stages in order; continuation lines joined, comments and the parser directive dropped. */
export function parseDockerfile(text: string): Stage[] {
  const lines = text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
  const args = new Map<string, string>();
  const stages: { name: string; from: string; instructions: Instruction[] }[] = [];
  for (const line of lines) {
    const m = /^([A-Z]+)\s+(.*)$/.exec(line);
    if (!m) throw new Error(`cannot parse Dockerfile line: ${line}`);
    const op = m[1] ?? "";
    const rest = (m[2] ?? "").trim();
    if (op === "ARG" && stages.length === 0) {
      const [k, v] = rest.split("=", 2);
      if (k !== undefined && v !== undefined) args.set(k, v);
      continue;
    }
    if (op === "FROM") {
      const f = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest);
      const image = (f?.[1] ?? "").replace(/\$\{(\w+)\}/g, (_, k: string) => args.get(k) ?? "");
      stages.push({ name: f?.[2] ?? String(stages.length), from: image, instructions: [] });
      continue;
    }
    const stage = stages.at(-1);
    if (!stage) throw new Error(`${op} before FROM`);
    stage.instructions.push({ op, args: rest });
  }
  return stages;
}

function run(cmd: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(" ")} failed in ${cwd}: ${stderr || stdout}`));
      else resolve();
    });
  });
}

/** One `.dockerignore` rule: a glob over context-relative paths, `!` re-including. */
interface IgnoreRule {
  readonly negate: boolean;
  readonly pattern: string;
  readonly regex: RegExp;
}

/** `.dockerignore`'s rules (comments and blank lines dropped, a trailing `/` ignored). */
export function parseDockerignore(text: string): IgnoreRule[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => {
      const negate = l.startsWith("!");
      const pattern = (negate ? l.slice(1) : l).replace(/^\/+|\/+$/g, "");
      const glob = pattern
        .split("")
        .map((c) => (c === "*" ? "[^/]*" : c === "?" ? "[^/]" : c.replace(/[.+^${}()|[\]\\]/g, "\\$&")))
        .join("")
        .replace(/\[\^\/\]\*\[\^\/\]\*/g, ".*");
      return { negate, pattern, regex: new RegExp(`^${glob}$`) };
    });
}

/**
 * Whether `path` (relative to the context, `/`-separated) is in the build context: the last rule
 * that matches it or one of its parent directories decides, as in Docker.
 */
export function inContext(rules: readonly IgnoreRule[], path: string): boolean {
  const parts = path.split("/");
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join("/"));
  let included = true;
  for (const r of rules) if (prefixes.some((p) => r.regex.test(p))) included = r.negate;
  return included;
}

/** `apt-get install` as a Dockerfile should write it: one layer, no recommends, no package lists left. */
const APT_INSTALL =
  /^apt-get update && apt-get install -y --no-install-recommends ([a-z0-9.+-]+(?: [a-z0-9.+-]+)*) && rm -rf \/var\/lib\/apt\/lists\/\*$/;

export interface BuiltImage {
  /** The final stage's /app. */
  readonly dir: string;
  readonly user: string;
  readonly env: Readonly<Record<string, string>>;
  /** ENTRYPOINT, exec form (empty without one). */
  readonly entrypoint: readonly string[];
  /** CMD, exec form. */
  readonly cmd: readonly string[];
  /** The Debian packages the final stage installs (`apt-get install`). */
  readonly packages: readonly string[];
  /** The final stage's LABELs, build arguments expanded. */
  readonly labels: Readonly<Record<string, string>>;
  readonly stages: readonly Stage[];
}

/**
 * Carry out `dockerfile` with `context` as the build context, into `out/<stage>`. `RUN npm ci` (all
 * dependencies) links the checkout's node_modules, installed from the same lockfile; `npm ci
 * --omit=dev` is run for real (from the npm cache when it can).
 */
export async function buildWithoutDocker(
  context: string,
  dockerfile: string,
  out: string,
  /** `docker build --build-arg K=V`: overrides a stage's `ARG K=default`. */
  buildArgs: Readonly<Record<string, string>> = {},
): Promise<BuiltImage> {
  const stages = parseDockerfile(await readFile(dockerfile, "utf8"));
  const ignoreFile = join(context, ".dockerignore");
  const rules = existsSync(ignoreFile) ? parseDockerignore(readFileSync(ignoreFile, "utf8")) : [];
  const rel = (p: string): string => relative(context, p).split(sep).join("/");
  // A directory is walked when it is in the context or a rule re-includes something beneath it.
  const walk = (p: string): boolean =>
    inContext(rules, rel(p)) || rules.some((r) => r.negate && r.pattern.startsWith(`${rel(p)}/`));
  const dirs = new Map<string, string>();
  let user = "root";
  let cmd: string[] = [];
  let entrypoint: string[] = [];
  let packages: string[] = [];
  let labels: Record<string, string> = {};
  const env: Record<string, string> = {};
  for (const stage of stages) {
    const dir = join(out, stage.name);
    await mkdir(dir, { recursive: true });
    dirs.set(stage.name, dir);
    user = "root";
    packages = [];
    labels = {};
    // A stage's ARGs, as its later instructions see them (`${NAME}` in ENV and LABEL).
    const stageArgs = new Map<string, string>();
    const expand = (text: string): string =>
      text.replace(/\$\{(\w+)\}/g, (_, k: string) => stageArgs.get(k) ?? "");
    for (const { op, args } of stage.instructions) {
      switch (op) {
        case "WORKDIR":
          if (args !== "/app")
            throw new Error(`WORKDIR ${args}: the test stands each stage's /app for a directory`);
          break;
        case "COPY": {
          const words = args.split(/\s+/);
          const from = words[0]?.startsWith("--from=") ? words.shift()?.slice("--from=".length) : undefined;
          const dest = words.pop() ?? "";
          for (const src of words) {
            const source =
              from !== undefined
                ? join(dirs.get(from) ?? "", src.replace(/^\/app\/?/, ""))
                : join(context, src);
            if (from === undefined && !inContext(rules, rel(source)) && !walk(source))
              throw new Error(`COPY ${src}: not found in the build context (.dockerignore leaves it out)`);
            const target = dest.endsWith("/")
              ? join(dir, dest, src.split("/").at(-1) ?? "")
              : join(dir, dest);
            await mkdir(dirname(target), { recursive: true });
            await cp(source, target, {
              recursive: true,
              verbatimSymlinks: true,
              ...(from === undefined ? { filter: (p: string) => walk(p) } : {}),
            });
          }
          break;
        }
        case "RUN": {
          if (/^npm ci\b/.test(args) && /--omit=dev\b/.test(args)) {
            await run("npm", [...args.split(/\s+/).slice(1), "--prefer-offline"], dir, process.env);
          } else if (/^npm ci\b/.test(args)) {
            await symlink(join(context, "node_modules"), join(dir, "node_modules"), "dir");
          } else if (args === "npm run build") {
            await run("npm", ["run", "--silent", "build"], dir, process.env);
          } else if (APT_INSTALL.test(args)) {
            // A Debian package of the base image's own distribution: the test runs this machine's
            // copy (.ci/run installs the same package), found where the package puts it.
            packages.push(...(APT_INSTALL.exec(args)?.[1] ?? "").split(/\s+/));
          } else if (/^rm -rf( \/usr\/local\/\S+)+$/.test(args)) {
            // Removes npm and corepack from the base image; nothing under /app.
          } else {
            throw new Error(`RUN ${args}: unknown to test/deploy/dockerfile.ts; teach it this step`);
          }
          break;
        }
        case "ENV": {
          const [k, v] = args.split("=", 2);
          if (k !== undefined && v !== undefined) env[k] = expand(v);
          break;
        }
        case "LABEL":
          for (const m of args.matchAll(/([\w.-]+)=("(?:[^"\\]|\\.)*"|\S+)/g)) {
            const v = m[2] ?? "";
            labels[m[1] ?? ""] = expand(v.startsWith('"') ? (JSON.parse(v) as string) : v);
          }
          break;
        case "ARG": {
          const [k = "", v = ""] = args.split("=", 2);
          stageArgs.set(k, buildArgs[k] ?? v);
          break;
        }
        case "USER":
          user = args;
          break;
        case "CMD":
          cmd = JSON.parse(args) as string[];
          break;
        case "ENTRYPOINT":
          entrypoint = JSON.parse(args) as string[];
          break;
        case "EXPOSE":
          break;
        default:
          throw new Error(`${op} ${args}: unknown to test/deploy/dockerfile.ts`);
      }
    }
  }
  const last = stages.at(-1);
  if (!last) throw new Error("no stage");
  return { dir: dirs.get(last.name) ?? "", user, env, entrypoint, cmd, packages, labels, stages };
}

/** One import a bundle leaves to run time, and the output file that makes it. */
export interface RunTimeImport {
  readonly file: string;
  readonly path: string;
  /** `import-statement` (an ES import) or `require-call` (bundled CommonJS, Node's own `require`). */
  readonly kind: string;
}

/**
 * What the bundle imports at run time (deploy/build.ts's metafile, `dist/.meta.json`): every
 * external import, and those that are not Node's own modules — which an image without node_modules
 * could not load. Allowed beside Node's: the optional speed-ups `ws` tries and carries on without,
 * and the entry point's import of the sandbox (a checkout's `dist/test`, never in the image).
 */
export function runTimeImports(metaJson: string): { all: RunTimeImport[]; outsideNode: RunTimeImport[] } {
  const meta = JSON.parse(metaJson) as {
    outputs: Record<string, { imports?: { path: string; kind: string; external?: boolean }[] }>;
  };
  const builtins = new Set(builtinModules);
  const optional = new Set(["bufferutil", "utf-8-validate"]);
  const all = Object.entries(meta.outputs).flatMap(([file, o]) =>
    (o.imports ?? []).filter((i) => i.external === true).map((i) => ({ file, path: i.path, kind: i.kind })),
  );
  const outsideNode = all.filter(
    ({ file, path }) =>
      !path.startsWith("node:") &&
      !builtins.has(path) &&
      !optional.has(path) &&
      // src/start-bot.ts's import of the sandbox, which the image leaves out on purpose.
      !(/(^|\/)chunks\/start-bot-\w+\.js$/.test(file) && path === "../test/sim/sandbox.js"),
  );
  return { all, outsideNode };
}
