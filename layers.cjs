/**
 * The layers of src/ and commands/, top to bottom: the one ordered list both the import rules
 * (`.dependency-cruiser.cjs`, run by `npm run lint`) and the diagram in `docs/architecture.md` are
 * made from. A module imports only its own layer and the layers below it; a test
 * (`test/unit/architecture/layer-list.test.ts`) checks that every module of src/ and commands/ is in
 * exactly one layer and that the diagram is this list.
 *
 * A pattern is a folder (`src/edge/`), a file (`src/cli.ts`) or a set of files
 * (`src/diagnosis/{diagnose,deadline}.ts`). A module is in the layer of the longest pattern that
 * matches it, so `src/slack/blocks/` (pure) is carved out of `src/slack/` (a surface).
 */

/** @typedef {{ name: string, says: string, patterns: string[] }} Layer */

/** @type {Layer[]} */
const LAYERS = [
  {
    name: "entry points",
    says: "assemble the process: build the adapters, hand the registry to the surfaces",
    patterns: ["src/{main,start-bot,cli,runtime,services,startup,ops-target}.ts", "src/wiring/"],
  },
  {
    name: "application",
    says: "use cases over injected ports, called by the wiring only; no Slack",
    patterns: ["src/app/"],
  },
  {
    name: "surfaces",
    says: "Slack listeners, the command grammar and handlers, the fleet's dispatcher",
    patterns: ["src/slack/", "commands/", "src/command-contract.ts", "src/fleet/"],
  },
  {
    name: "engine",
    says: "approvals (store, workflow, policy), executors, jobs and waits, watcher, audit log",
    patterns: ["src/approvals/", "src/actions/", "src/jobs/", "src/watcher/", "src/audit/"],
  },
  {
    name: "collectors",
    says: "read through the ports and hand snapshots to the pure core",
    patterns: [
      "src/diagnosis/{diagnose,content-collect,controllers-collect,evidence-collect,causes-collect,aws-collect,aws-ahead,removal-plan,deadline}.ts",
      "src/traffic/",
      "src/orphans/",
      "src/preflight/collect.ts",
    ],
  },
  {
    name: "pure core",
    says: "models, results and words over snapshots: no socket, file, SDK or connection",
    patterns: [
      "src/requests/",
      "src/command-result.ts",
      "src/diagnosis/",
      "src/edge/",
      "src/preflight/",
      "src/timeline/",
      "src/render/",
      "src/slack/blocks/",
      "src/audit/{entry,observation}.ts",
    ],
  },
  {
    name: "adapters",
    says: "Kubernetes, AWS, DNS and HTTP, Redis, the ops port (each with its contract)",
    patterns: ["src/kube/", "src/aws/", "src/net/", "src/ops/", "src/redis/", "src/redis-connection.ts"],
  },
  {
    name: "foundation",
    says: "configuration, errors, logging, utilities, keys",
    patterns: [
      "src/{config,errors,log,log-silent,early-signals}.ts",
      "src/config/",
      "src/util/",
      "src/trust/",
    ],
  },
];

const escapeRegex = (s) => s.replace(/[.+^$()|[\]\\]/g, "\\$&");

/** A pattern as an anchored regular expression (the form dependency-cruiser takes). */
function regexOf(pattern) {
  const body = escapeRegex(pattern).replace(/\{([^}]*)\}/g, (_, alts) => `(${alts.split(",").join("|")})`);
  return pattern.endsWith("/") ? `^${body}` : `^${body}$`;
}

/** Whether a pattern matches a path (for the test and the rules alike). */
function matches(pattern, path) {
  return new RegExp(regexOf(pattern)).test(path);
}

/** The layer a path is in (by its longest matching pattern), or undefined. */
function layerOf(path) {
  let best;
  for (const layer of LAYERS)
    for (const p of layer.patterns)
      if (matches(p, path) && (best === undefined || p.length > best.pattern.length))
        best = { layer, pattern: p };
  return best?.layer;
}

/**
 * The modules of some layers as a dependency-cruiser `{ path, pathNot }`: their patterns, less the
 * longer patterns of other layers carved out of them.
 */
function modulesOf(names) {
  const inside = LAYERS.filter((l) => names.includes(l.name));
  const outside = LAYERS.filter((l) => !names.includes(l.name));
  const path = inside.flatMap((l) => l.patterns);
  const pathNot = outside
    .flatMap((l) => l.patterns)
    .filter((o) => path.some((p) => p.endsWith("/") && o.startsWith(p) && o !== p));
  return { path: path.map(regexOf), pathNot: pathNot.map(regexOf) };
}

/** The diagram in `docs/architecture.md`: each layer, what it does, and its patterns. */
function diagram() {
  const width = Math.max(...LAYERS.map((l) => l.name.length)) + 2;
  const lines = [];
  LAYERS.forEach((layer, i) => {
    if (i > 0) lines.push(`${" ".repeat(width)}│`);
    lines.push(`${layer.name.padEnd(width)}${layer.says}`);
    let line = " ".repeat(width);
    for (const p of layer.patterns) {
      if (line.trim() !== "" && line.length + p.length + 2 > 100) {
        lines.push(line.trimEnd());
        line = " ".repeat(width);
      }
      line += `${p}  `;
    }
    lines.push(line.trimEnd());
  });
  return lines.join("\n");
}

module.exports = { LAYERS, regexOf, matches, layerOf, modulesOf, diagram };
