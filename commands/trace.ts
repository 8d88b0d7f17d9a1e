import { commandObserver } from "../src/audit/observe.js";
import { ObservationKind } from "../src/audit/observation.js";
import { assertHostname } from "../src/edge/hostname.js";
import { ErrorCode, UnstuckError } from "../src/errors.js";
import { assertNamespaceName } from "../src/kube/names.js";
import type { planPathRepair as PlanPathRepair, RepairSubject } from "../src/traffic/repoint.js";
import { nearestNames } from "../src/util/similar.js";
import type { CommandSyntax } from "./grammar.js";
import type { CommandContext, CommandModule, CommandResult, CommandServices } from "./types.js";

const PROBE_FLAG = {
  name: "probe",
  kind: "boolean",
  description: "Also resolve each hostname and GET it (and the health paths) now, a few seconds at most",
} as const;

export const traceSyntax: CommandSyntax = {
  path: ["trace"],
  summary:
    "Is the traffic path intact? Follows a hostname through Route 53 and CloudFront to its load balancer and the Ingress/Service that owns it, flagging every stale alias or origin.",
  positionals: [{ name: "hostname", description: "DNS name a client asks for, e.g. test.example.com" }],
  flags: [PROBE_FLAG],
  examples: ["trace test.example.com", "trace test.example.com --probe"],
};

export const traceNsSyntax: CommandSyntax = {
  path: ["trace", "ns"],
  aliases: [["trace", "namespace"]],
  summary:
    "Every hostname and CloudFront distribution that reaches a namespace's load balancers (or still names one that is gone), each path traced.",
  positionals: [{ name: "namespace", description: "Namespace name" }],
  flags: [PROBE_FLAG],
  examples: ["trace ns myapp"],
};

export function awsOf(services: CommandServices): NonNullable<CommandServices["aws"]>["port"] {
  if (!services.aws) {
    throw new UnstuckError(
      ErrorCode.BadInput,
      "The traffic path needs AWS: set AWS_REGION (and credentials) for the bot; without a region it only looks at the cluster.",
    );
  }
  return services.aws.port;
}

/** The cluster name the controller tags with, when the bot was told it. */
export function clusterOf(services: CommandServices): { readonly cluster?: string } {
  const cluster = services.aws?.cluster;
  return cluster !== undefined ? { cluster } : {};
}

/** A zone small enough to read whole for a suggestion (a few pages of Route 53's 300 records each). */
const SUGGEST_ZONE_RECORDS = 1_500;

/**
 * The record names within a typo of the names asked for, read from their zones when each is small
 * enough to list in a few calls; nothing when a zone is bigger or a read fails (it is a hint).
 */
async function nearestHostnames(
  aws: NonNullable<CommandServices["aws"]>["port"],
  hostnames: readonly string[],
): Promise<string[]> {
  try {
    const zones = await aws.hostedZones();
    const found = new Set<string>();
    for (const host of hostnames) {
      const name = host.toLowerCase().replace(/\.$/, "");
      const zone = zones
        .filter((z) => name === z.name || name.endsWith(`.${z.name}`))
        .sort((a, b) => b.name.length - a.name.length)[0];
      if (zone?.recordCount === undefined || zone.recordCount > SUGGEST_ZONE_RECORDS) continue;
      const names = (await aws.recordSets(zone.id))
        .filter((r) => ["A", "AAAA", "CNAME"].includes(r.type))
        .map((r) => r.name);
      for (const n of nearestNames(name, [...new Set(names)])) found.add(n);
    }
    return [...found].slice(0, 3);
  } catch {
    return [];
  }
}

/**
 * The path's trace and its repair plan. The traffic code is imported on the first call, so the
 * terminal's other commands (`ns` above all) never evaluate it.
 */
export async function planRepair(
  ...args: Parameters<typeof PlanPathRepair>
): ReturnType<typeof PlanPathRepair> {
  const { planPathRepair } = await import("../src/traffic/repoint.js");
  return planPathRepair(...args);
}

/** Trace and plan; with `--probe`, what DNS and HTTP answer for each traced hostname too. */
async function traced(ctx: CommandContext, subject: RepairSubject, probe: boolean): Promise<CommandResult> {
  const { trace, plan } = await planRepair(
    awsOf(ctx.services),
    ctx.services.kube,
    subject,
    ctx.services.now,
    clusterOf(ctx.services),
  );
  // A name nothing answers for is a wrong name, not an intact path: said as such, nothing posted.
  const missing = "hostnames" in subject ? trace.paths.filter((p) => p.missing !== undefined) : [];
  if (
    missing.length > 0 &&
    missing.length === trace.paths.length &&
    trace.warnings.length === 0 &&
    trace.notes.length === 0 &&
    (trace.denied ?? []).length === 0
  ) {
    const near = await nearestHostnames(
      awsOf(ctx.services),
      missing.map((p) => p.hostname),
    );
    throw new UnstuckError(
      ErrorCode.BadInput,
      `No such name: ${missing.map((p) => p.missing ?? p.hostname).join("; ")}. ${
        near.length > 0
          ? `Did you mean ${near.map((h) => `\`trace ${h}\``).join(" or ")}?`
          : "Check the spelling; `trace ns <namespace>` lists every name that reaches a namespace."
      }`,
    );
  }
  const observe = commandObserver(ctx.services, ctx.actor, "trace");
  const what = "namespace" in subject ? `namespace ${subject.namespace}` : subject.hostnames.join(", ");
  if (!probe) {
    await observe(ObservationKind.PathCheck, what, pathSummary(trace.paths));
    return { type: "trace", trace, repair: plan };
  }
  if (!ctx.services.probe) {
    throw new UnstuckError(
      ErrorCode.Config,
      "--probe needs DNS and HTTP access, which this bot was not given.",
    );
  }
  const { probeHosts } = await import("../src/traffic/trace.js");
  const probes = await probeHosts(
    ctx.services.probe,
    trace.paths.map((p) => p.hostname),
    ctx.services.healthPaths ?? [],
  );
  const answers = probes.map(
    (p) => `${p.hostname}: DNS ${p.dns}; ${p.http.map((h) => h.result).join(", ") || "no HTTP check"}`,
  );
  await observe(
    ObservationKind.PathCheck,
    what,
    `${pathSummary(trace.paths)}; probes: ${answers.join("; ")}`,
  );
  return { type: "trace", trace: { ...trace, probes }, repair: plan };
}

/** `3 paths: test.example.com stale, api.example.com ok`: one line for the timeline. */
function pathSummary(paths: readonly { readonly hostname: string; readonly verdict: string }[]): string {
  if (paths.length === 0) return "no path found";
  return `${String(paths.length)} path${paths.length === 1 ? "" : "s"}: ${paths.map((p) => `${p.hostname} ${p.verdict}`).join(", ")}`;
}

export const traceCommand: CommandModule<{ hostname: string; probe: boolean }> = {
  syntax: traceSyntax,
  build: (args) => ({
    hostname: assertHostname(args.positionals[0] ?? ""),
    probe: args.flags.probe === true,
  }),
  run: (input, ctx) => traced(ctx, { hostnames: [input.hostname] }, input.probe),
};

export const traceNsCommand: CommandModule<{ namespace: string; probe: boolean }> = {
  syntax: traceNsSyntax,
  build: (args) => ({
    namespace: assertNamespaceName(args.positionals[0] ?? ""),
    probe: args.flags.probe === true,
  }),
  run: (input, ctx) => traced(ctx, { namespace: input.namespace }, input.probe),
};
