/**
 * The layer rules of src/ and commands/, checked by `npm run lint` (so by `npm test`):
 * `depcruise --config .dependency-cruiser.cjs src commands`. Each rule says why it exists.
 *
 * The layers, top to bottom, are the ordered list in `layers.cjs` (which also draws the diagram in
 * docs/architecture.md): each layer imports only itself and the layers below it (`down-only-*`, one
 * rule per layer, made from the list). The rules after them hold the lines inside a layer that matter.
 *
 * Type-only imports count everywhere (`tsPreCompilationDeps`): a cycle through types still ties two
 * modules' designs together, and a type from an SDK still ties a model to one client.
 */

const { LAYERS, modulesOf } = require("./layers.cjs");

/** Modules that touch the world: sockets, files, processes. */
const IO_BUILTINS =
  "^(node:)?(net|http|https|http2|dns|dns/promises|fs|fs/promises|child_process|dgram|tls|readline|cluster|worker_threads)$";
/** Packages that are clients of something outside the process. */
const IO_PACKAGES =
  "^node_modules/(@aws-sdk/|@smithy/|@kubernetes/client-node/|@slack/(bolt|web-api|socket-mode)/|ioredis/|bullmq/|undici/|prom-client/)";
/** What of src/kube and src/aws is contract (snapshots, ports, name checks, patches), not adapter. */
const KUBE_CONTRACT = "^src/kube/(types|port|names|finalizer-patch|limiter)\\.ts$";
const AWS_CONTRACT = "^src/aws/(types|port)\\.ts$";
const NET_CONTRACT = "^src/net/port\\.ts$";
/** The adapters and the services that hold a connection. */
const IO_MODULES = [
  "^src/kube/",
  "^src/aws/",
  "^src/net/",
  "^src/slack/",
  "^src/redis-connection\\.ts$",
  "^src/redis/",
  "^src/ops/",
  "^src/jobs/",
  "^src/watcher/",
  "^src/approvals/(store|notifier|workflow)(-(context|reads|pending|execution|bookkeeping|filing|votes|sweep|plans))?\\.ts$",
  "^src/audit/log\\.ts$",
];
/** The pure core: computations over snapshots, and words for people (from the layer list). */
const PURE_CORE = modulesOf(["pure core"]);
/** Each client of the outside world, and the one place (besides the wiring) that may load it. */
const CLIENTS = [
  ["kubernetes", "@kubernetes/client-node|undici", "^src/kube/"],
  ["aws", "@aws-sdk/[^/]+", "^src/aws/"],
  ["redis", "ioredis", "^src/redis-connection\\.ts$"],
  ["bullmq", "bullmq", "^src/jobs/"],
  ["slack", "@slack/bolt|@slack/web-api", "^src/slack/"],
  ["metrics", "prom-client", "^src/ops/metrics\\.ts$"],
  [
    "network",
    "(node:)?(net|http|https|http2|dns|dns/promises|dgram|tls)",
    "^src/(net|kube|slack)/|^src/ops/server\\.ts$",
  ],
];
/** Where the process is assembled: the only modules that build adapters and hand out the registry. */
const ENTRY_POINTS = ["^src/(main|start-bot|cli|runtime)\\.ts$", "^src/wiring/"];
const WIRING = ["^src/(main|start-bot|cli|runtime|services|startup|ops-target)\\.ts$", "^src/wiring/"];

/** One rule per layer: it imports nothing of the layers above it. */
const DOWN_ONLY = LAYERS.slice(1).map((layer, i) => ({
  name: `down-only-${layer.name.replace(/ /g, "-")}`,
  comment: `The ${layer.name} (${layer.says}) import only their own layer and those below, so the layers can be read, tested and changed from the bottom up (the order is layers.cjs).`,
  severity: "error",
  from: modulesOf([layer.name]),
  to: modulesOf(LAYERS.slice(0, i + 1).map((l) => l.name)),
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...DOWN_ONLY,
    {
      name: "no-cycles",
      comment:
        "No import cycle anywhere in src/ and commands/: a cycle has no order to read, test or change its modules in, and at runtime one of them sees the other half-initialised.",
      severity: "error",
      from: { path: "^(src|commands)/" },
      to: { circular: true },
    },
    {
      name: "core-is-pure",
      comment:
        "The pure core (the edge model, the analysis, the renderers) computes over snapshots it is given: it imports no socket, file or SDK, no adapter of src/kube or src/aws, and no module that holds a connection. That is what makes it testable on plain data and safe to call from any surface.",
      severity: "error",
      from: PURE_CORE,
      to: {
        path: [IO_BUILTINS, IO_PACKAGES, ...IO_MODULES],
        pathNot: [KUBE_CONTRACT, AWS_CONTRACT, NET_CONTRACT, "^src/slack/blocks/"],
      },
    },
    ...CLIENTS.map(([name, packages, home]) => ({
      name: `io-in-adapters-${name}`,
      comment:
        "I/O lives in adapters: each client of the world outside the process is imported (for its values) only in its own adapter and by the wiring; everything else receives a port or an injected function.",
      severity: "error",
      from: { pathNot: [...WIRING, home] },
      to: { path: `^(node_modules/)?(${packages})(/|$)`, dependencyTypesNot: ["type-only"] },
    })),
    {
      name: "aws-sdk-only-in-src-aws",
      comment:
        "Only src/aws speaks the AWS SDK, its types included: every other module (the wiring too) sees AWS through the ports of src/aws/port.ts and the snapshots of src/aws/types.ts, so no model, collector or executor is tied to one SDK client or its shapes.",
      severity: "error",
      from: { path: "^(src|commands)/", pathNot: "^src/aws/" },
      to: { path: "^(node_modules/)?@aws-sdk/" },
    },
    {
      name: "adapters-wired-at-the-top",
      comment:
        "A concrete adapter (the client-node and SDK adapters, the namespace watch, the probes of src/net) is constructed by the wiring only; the rest of the code uses its port (type-only imports stay free).",
      severity: "error",
      from: { path: "^(src|commands)/", pathNot: [...WIRING, "^src/kube/", "^src/aws/", "^src/net/"] },
      to: {
        path: ["^src/kube/", "^src/aws/", "^src/net/"],
        pathNot: [KUBE_CONTRACT, AWS_CONTRACT, NET_CONTRACT],
        dependencyTypesNot: ["type-only"],
      },
    },
    {
      name: "src-below-commands",
      comment:
        "commands/ is the grammar and the handlers over the src/ services, so src/ never imports it; only the entry points and src/wiring, which hand its registry and its request planners to the surfaces (through src/command-contract.ts and injected functions), may.",
      severity: "error",
      from: { path: "^src/", pathNot: ENTRY_POINTS },
      to: { path: "^commands/" },
    },
    {
      name: "commands-below-surfaces",
      comment:
        "A handler returns a result; it never reaches for the surface that shows it (src/slack) nor for the entry points and wiring that call it.",
      severity: "error",
      from: { path: "^commands/" },
      to: { path: ["^src/slack/", "^src/render/(text|diagnosis-text)\\.ts$", ...WIRING] },
    },
    {
      name: "app-speaks-no-slack",
      comment:
        "src/app holds the use cases (what follows an outcome, a posted answer, a form) over injected ports: it imports nothing of Slack, neither src/slack nor its packages; a card, a link or a reply in Slack's words is a presenter the wiring passes in.",
      severity: "error",
      from: { path: "^src/app/" },
      to: { path: ["^src/slack/", "^node_modules/@slack/"] },
    },
    {
      name: "engine-speaks-no-slack",
      comment:
        "The engine, the collectors and the pure core emit typed results and events; only src/slack turns them into mrkdwn or Block Kit (and src/render into terminal text). None of them imports src/slack or a Slack package, so no Slack word is written below the surfaces.",
      severity: "error",
      from: {
        path: "^src/(approvals|actions|jobs|watcher|audit|timeline|diagnosis|edge|traffic|orphans|preflight|render)/",
      },
      to: { path: ["^src/slack/", "^node_modules/@slack/"] },
    },
    {
      name: "app-called-by-wiring",
      comment:
        "The use cases of src/app are constructed and connected by the runtime and src/wiring only: the surfaces and the engine are handed them as functions, so neither depends on the application layer above it.",
      severity: "error",
      from: { path: "^(src|commands)/", pathNot: [...WIRING, "^src/app/"] },
      to: { path: "^src/app/" },
    },
    {
      name: "runtime-target-injected",
      comment:
        "src/ops/runtime-target.ts is handed its readiness checks and counters: it imports neither the Kubernetes adapter, the approval store, nor anything of Slack (src/ops-target.ts wires them).",
      severity: "error",
      from: { path: "^src/ops/runtime-target\\.ts$" },
      to: {
        path: [
          "^src/kube/",
          "^src/approvals/",
          "^src/slack/",
          "^node_modules/@slack/",
          "^node_modules/@kubernetes/",
        ],
      },
    },
    {
      name: "jobs-run-actions",
      comment:
        "Jobs run the executors, never the other way round: src/actions gets its scheduling injected and owns the data it schedules.",
      severity: "error",
      from: { path: "^src/actions/" },
      to: { path: "^src/jobs/" },
    },
    {
      name: "approvals-below-actions",
      comment:
        "The approval model, its store and workflow come first; the executors and queues act on approved requests, so src/approvals imports neither.",
      severity: "error",
      from: { path: "^src/approvals/" },
      to: { path: ["^src/actions/", "^src/jobs/"] },
    },
    {
      name: "edge-below-diagnosis",
      comment: "The diagnosis reads the one model of the edge; src/edge never imports the diagnosis.",
      severity: "error",
      from: { path: "^src/edge/" },
      to: { path: "^src/diagnosis/" },
    },
    {
      name: "blocks-only-render",
      comment:
        "src/slack/blocks turns results into Block Kit; the services that post them (the watcher, the waits, the timeline's delivery, the listeners) import the blocks, never the reverse.",
      severity: "error",
      from: { path: "^src/slack/blocks/" },
      to: {
        path: ["^src/watcher/", "^src/jobs/", "^src/timeline/", "^src/slack/"],
        pathNot: "^src/slack/blocks/",
      },
    },
    {
      name: "timeline-not-slack",
      comment:
        "src/timeline builds the post-mortem draft; its Slack card and upload live in src/slack, which imports the timeline.",
      severity: "error",
      from: { path: "^src/timeline/" },
      to: { path: "^src/slack/" },
    },
    {
      name: "product-not-tests",
      comment:
        "Shipped code never imports test/: the only exception is the entry point's dynamic import of the local sandbox, which a production image (shipping no test/) answers with the missing variables.",
      severity: "error",
      from: { path: "^(src|commands)/" },
      to: { path: "^test/", dependencyTypesNot: ["dynamic-import", "type-import"] },
    },
  ],
  options: {
    doNotFollow: { path: ["^node_modules/", "^test/"] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js"],
    },
  },
};
