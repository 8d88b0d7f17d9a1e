/**
 * The warm side of the `ns` benchmark, as its own process (`node --import tsx bench/ns-warm.ts
 * <namespace> <concurrency> [cli]`, with KUBECONFIG set): the services the bot builds from its
 * configuration (the terminal's with `cli`: no discovery cache, no Deployment watch), held for the
 * life of the process as the running bot holds them, and the command
 * dispatched through the same registry. Being its own process, it does not share an event loop with
 * the simulator in the benchmark's process. Reads commands from stdin, one per line, and answers each
 * with one JSON line:
 *   `diagnose` → `{ ms, summary }`   `ns <namespace>` through the command registry
 *   `floor`    → `{ ms, types }`     one round of every namespaced type's list at `concurrency`
 *                                     through the bot's adapter (discovery first, not timed)
 *   `rawfloor` → `{ ms, types }`     the same round with bare `fetch` (metadata-only, paged): what
 *                                     the server and the network cost without the adapter
 *   `fresh`    → `{ ms, types }`     the least a diagnosis that reads the cluster now can ask: the
 *                                     Namespace, then only the types its NamespaceContentRemaining
 *                                     condition names, every page, at `concurrency`, through the
 *                                     bot's adapter; nothing analysed or rendered (discovery first,
 *                                     not timed)
 *   `reads`    → `{ ms, calls }`     every read one diagnosis of the namespace makes through the bot's
 *                                     ports (Kubernetes and AWS: lists, logs, Argo CD, load balancers,
 *                                     security groups, CloudTrail…), recorded on its first use from
 *                                     one untimed `diagnose`, then replayed with the same arguments:
 *                                     the Namespace, then every other read at once (at `concurrency`),
 *                                     nothing analysed or rendered — a floor for the whole answer,
 *                                     stricter than its own order (most reads depend on an earlier one)
 *   `rss`      → `{ rssMiB, maxRssMiB }` this process's resident set now and at its peak
 * It prints `{"ready":true}` once loaded.
 */
import { createInterface } from "node:readline";
import { performance } from "node:perf_hooks";
import { defaultRegistry } from "../commands/index.js";
import { loadConfig } from "../src/config.js";
import { loadKubeConfig } from "../src/kube/client-node-adapter.js";
import { createLogger } from "../src/log.js";
import { createServices } from "../src/services.js";
import { mapLimit } from "../src/util/concurrency.js";
import { summarize } from "./ns-summary.js";

// `cli` as the third argument: the terminal's services (no discovery cache, no Deployment watch).
const [namespace = "", concurrency = "64", mode = "bot"] = process.argv.slice(2);
const config = loadConfig(process.env);
// As the bot builds them (src/runtime.ts): long-running, so discovery is cached and kept current by
// watching CRDs and APIServices, and a warm diagnosis asks for no discovery at all.
const services = createServices(config, createLogger({ level: "silent", fd: 2 }), () => new Date(), {
  longRunning: mode !== "cli",
});
const registry = defaultRegistry("unstuck");
const actor = { userId: "bench", teamId: "local", surface: "cli" } as const;
const write = (value: unknown): boolean => process.stdout.write(`${JSON.stringify(value)}\n`);

const listable = async () =>
  (await services.kube.discover()).resources.filter((t) => t.namespaced && t.verbs.includes("list"));

/** Every page of one list with bare fetch, as the adapter asks for it (metadata only, 500 a page). */
async function rawList(server: string, token: string, path: string): Promise<void> {
  let cont: string | undefined;
  do {
    const query = `?limit=500${cont !== undefined ? `&continue=${encodeURIComponent(cont)}` : ""}`;
    const res = await fetch(`${server}${path}${query}`, {
      headers: {
        authorization: `Bearer ${token}`,
        accept: "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
      },
    });
    const list = (await res.json()) as { metadata?: { continue?: string } };
    cont = list.metadata?.continue || undefined;
  } while (cont !== undefined);
}

/** One call of a port method, as a diagnosis made it. */
interface PortCall {
  readonly port: object;
  readonly method: string;
  readonly args: readonly unknown[];
}

/** `port` with every method call recorded in `calls` before it is made. */
function recording<T extends object>(port: T, calls: PortCall[]): T {
  return new Proxy(port, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== "function" || typeof key !== "string" || key === "close") return value;
      return (...args: unknown[]) => {
        calls.push({ port: target, method: key, args });
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/** The port calls of one diagnosis of `namespace` through the command registry (untimed). */
async function recordReads(): Promise<PortCall[]> {
  const calls: PortCall[] = [];
  const aws = services.aws;
  const result = await registry.dispatch(
    `ns ${namespace}`,
    {
      actor,
      services: {
        ...services,
        kube: recording(services.kube, calls),
        ...(aws !== undefined ? { aws: { ...aws, port: recording(aws.port, calls) } } : {}),
      },
    },
    "unstuck",
  );
  if (result.type !== "diagnosis") throw new Error(`ns answered ${result.type}`);
  return calls;
}

let reads: PortCall[] | undefined;

write({ ready: true });
for await (const line of createInterface({ input: process.stdin })) {
  if (line === "diagnose") {
    const t0 = performance.now();
    const result = await registry.dispatch(`ns ${namespace}`, { actor, services }, "unstuck");
    const ms = performance.now() - t0;
    if (result.type === "diagnosis") write({ ms, summary: summarize(result.diagnosis) });
    else write({ error: `ns answered ${result.type}: ${JSON.stringify(result).slice(0, 500)}` });
  } else if (line === "floor") {
    const types = await listable();
    const t0 = performance.now();
    await mapLimit(types, Number(concurrency), (t) => services.kube.listObjects(t, namespace));
    write({ ms: performance.now() - t0, types: types.length });
  } else if (line === "fresh") {
    const types = await listable();
    const byName = new Map(types.map((t) => [t.group === "" ? t.resource : `${t.resource}.${t.group}`, t]));
    const t0 = performance.now();
    const ns = await services.kube.getNamespace(namespace);
    const report =
      ns?.conditions.find((c) => c.type === "NamespaceContentRemaining" && c.status === "True")?.message ??
      "";
    const said = [...report.matchAll(/([A-Za-z0-9.-]+) has \d+ resource instances/g)];
    const named = said.flatMap((m) => {
      // A core type is named with an empty group after its dot (`configmaps.`), as the controller writes it.
      const t = byName.get((m[1] ?? "").replace(/\.$/, ""));
      return t === undefined ? [] : [t];
    });
    await mapLimit(named, Number(concurrency), (t) => services.kube.listObjects(t, namespace));
    const ms = performance.now() - t0;
    if (named.length !== said.length || said.length === 0)
      write({ error: `fresh: ${String(said.length)} types in the condition, ${String(named.length)} found` });
    else write({ ms, types: named.length });
  } else if (line === "rawfloor") {
    const kc = loadKubeConfig(config.kubeconfig !== undefined ? { path: config.kubeconfig } : undefined);
    const server = kc.getCurrentCluster()?.server ?? "";
    const token = kc.getCurrentUser()?.token ?? "";
    const types = await listable();
    const t0 = performance.now();
    await mapLimit(types, Number(concurrency), (t) =>
      rawList(
        server,
        token,
        `${t.group === "" ? "/api" : `/apis/${t.group}`}/${t.version}/namespaces/${namespace}/${t.resource}`,
      ),
    );
    write({ ms: performance.now() - t0, types: types.length });
  } else if (line === "reads") {
    reads ??= await recordReads();
    const replay = (c: PortCall): Promise<unknown> =>
      Promise.resolve((c.port as Record<string, (...a: unknown[]) => unknown>)[c.method]?.(...c.args));
    const first = reads.filter((c) => c.method === "getNamespace");
    const t0 = performance.now();
    await Promise.all(first.map(replay));
    await mapLimit(
      reads.filter((c) => c.method !== "getNamespace"),
      Number(concurrency),
      replay,
    );
    write({ ms: performance.now() - t0, calls: reads.length });
  } else if (line === "rss") {
    write({
      rssMiB: process.memoryUsage().rss / 2 ** 20,
      maxRssMiB: process.resourceUsage().maxRSS / 1024,
    });
  } else {
    write({ error: `unknown command ${line}` });
  }
}
// stdin closed: stop the discovery watches so the process can end.
await services.kube.close?.();
