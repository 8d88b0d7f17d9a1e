/**
 * `trace` on the seed world through the real SDK clients and the kube adapter: the stale
 * CloudFront origin behind test.example.com (docs/incident.md, step 9) and every stale alias of the
 * namespace; after the namespace is re-created and the simulated controller builds a new ALB, the
 * replacement is named — and with two candidates it is offered as a choice, never guessed.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AwsClients } from "../../../src/aws/clients.js";
import { createAwsAdapter } from "../../../src/aws/sdk-adapter.js";
import { runCli } from "../../../src/cli.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import { traceHostnames, traceNamespace } from "../../../src/traffic/trace.js";
import type { World } from "../../sim/world.js";
import { openAwsWorld, recoverSeed, type AwsWorld } from "../helpers/aws-world.js";
import { linesIo } from "../../helpers/cli-io.js";

let opened: AwsWorld | undefined;
afterEach(async () => {
  await opened?.close();
  opened = undefined;
});

async function open(): Promise<{ w: World; c: AwsClients }> {
  opened = await openAwsWorld("seed-incident.yaml");
  return opened;
}

describe("trace", () => {
  it("test.example.com: Route 53 → CloudFront → a deleted ALB as origin is STALE, and the origin is flagged fragile", async () => {
    const { w, c } = await open();
    const t = await traceHostnames(
      createAwsAdapter(c),
      createKubeAdapter(w.kube.kubeconfig()),
      ["Test.Example.com."],
      () => new Date(),
    );
    const [p] = t.paths;
    expect(p?.hostname).toBe("test.example.com");
    expect(p?.verdict).toBe("stale");
    expect(p?.hops.map((h) => [h.kind, h.verdict])).toEqual([
      ["record", "ok"],
      ["distribution", "ok"],
      ["origin", "stale"],
    ]);
    const origin = p?.hops[2];
    expect(origin?.ref).toMatchObject({ distributionId: "E2MYAPPTEST0001", originId: "myapp-worker-alb" });
    expect(origin?.warning).toMatch(/fragile/);
    expect(t.warnings).toEqual([]);
  });

  it("trace ns finds every stale alias and origin of the namespace's old load balancers", async () => {
    const { w, c } = await open();
    const t = await traceNamespace(
      createAwsAdapter(c),
      createKubeAdapter(w.kube.kubeconfig()),
      "myapp",
      () => new Date(),
    );
    expect(t.paths.map((p) => p.hostname)).toEqual([
      "admin-api.example.com",
      "admin.example.com",
      "api.example.com",
      "cms-api.example.com",
      "cms.example.com",
      "test.example.com",
      "worker.example.com",
    ]);
    expect(t.paths.every((p) => p.verdict === "stale")).toBe(true);
  });

  it("after recovery the worker's new ALB is named (same owner, serves the host); ALBs of other stacks are never offered while the owner is not back", async () => {
    const { w, c } = await open();
    await recoverSeed(w, ["myapp-worker-ingress"]);
    const aws = createAwsAdapter(c);
    const kube = createKubeAdapter(w.kube.kubeconfig());
    const fresh = w.kube.store.get("networking.k8s.io/v1", "Ingress", "myapp", "myapp-worker-ingress") as {
      status: { loadBalancer: { ingress: { hostname: string }[] } };
    };
    const newHost = fresh.status.loadBalancer.ingress[0]?.hostname ?? "";
    const t = await traceNamespace(aws, kube, "myapp", () => new Date());
    const test = t.paths.find((p) => p.hostname === "test.example.com");
    const origin = test?.hops.find((h) => h.kind === "origin");
    expect(origin?.verdict).toBe("stale");
    expect(origin?.replacement?.dnsName).toBe(newHost);
    expect(origin?.replacement?.owner).toBe("Ingress myapp/myapp-worker-ingress");
    expect(origin?.replacement?.cluster).toBe("prod-eks");
    expect(origin?.replacement?.serves).toContain("test.example.com");
    expect(origin?.replacement?.evidence).toMatch(/exactly the name cluster prod-eks's controller derives/);

    // Other Ingresses of the namespace are back (they serve any host), the worker is not: nothing in
    // the cluster is the old origin's owner, so nothing replaces it and no other stack is offered.
    await opened?.close();
    const other = await openAwsWorld("seed-incident.yaml");
    opened = other;
    await recoverSeed(other.w, ["myapp-web-a", "myapp-web-b"]);
    const two = await traceNamespace(
      createAwsAdapter(other.c),
      createKubeAdapter(other.w.kube.kubeconfig()),
      "myapp",
      () => new Date(),
    );
    const o2 = two.paths
      .find((p) => p.hostname === "test.example.com")
      ?.hops.find((h) => h.kind === "origin");
    expect(o2?.replacement).toBeUndefined();
    expect(o2?.candidates).toBeUndefined();
    expect(o2?.oldOwner).toBeUndefined();
    expect(o2?.unresolved).toMatch(/cannot be established/);
  });

  /** `npm run unstuck -- <args>` against the world: its exit code and everything it printed. */
  async function terminal(w: World): Promise<{
    ask: (...args: string[]) => Promise<{ code: number; text: string }>;
    close: () => Promise<void>;
  }> {
    const dir = await mkdtemp(join(tmpdir(), "unstuck-trace-"));
    const kubeconfig = join(dir, "kubeconfig");
    await w.kube.writeKubeconfig(kubeconfig);
    return {
      ask: async (...args) => {
        const out: string[] = [];
        const io = linesIo(out);
        const code = await runCli([...args, "--kubeconfig", kubeconfig], w.aws.env(), io);
        return { code, text: out.join("\n") };
      },
      close: () => rm(dir, { recursive: true, force: true }),
    };
  }

  it("from the terminal: one line per hop, bad input refused with a clear message and no AWS call", async () => {
    const { w } = await open();
    const t = await terminal(w);
    try {
      const ok = await t.ask("trace", "test.example.com");
      expect(ok.code).toBe(0);
      expect(ok.text).toMatch(/STALE +origin myapp-worker-alb/);
      const before = w.aws.calls().length;
      const bad = await t.ask("trace", "not_a_host");
      expect(bad.code).not.toBe(0);
      expect(bad.text).toMatch(/is not a DNS host name/);
      expect(w.aws.calls().length).toBe(before);
    } finally {
      await t.close();
    }
  });

  it("a name nothing answers for: no such record in its zone, refused — never an intact path", async () => {
    const { w } = await open();
    const t = await terminal(w);
    try {
      const typo = await t.ask("trace", "tset.example.com");
      expect(typo.code).not.toBe(0);
      expect(typo.text).toMatch(
        /No such name: no A\/AAAA\/CNAME record named tset\.example\.com in zone example\.com \(/,
      );
      expect(typo.text).not.toMatch(/intact/i);
      // A zone nobody here serves: said as such.
      const other = await t.ask("trace", "www.other.org");
      expect(other.code).not.toBe(0);
      expect(other.text).toContain("No such name: no zone read serves www.other.org");
      // A refused --to is the answer: its first line, before the trace it was checked against.
      const refused = await t.ask("repoint", "test.example.com", "--to", "k8s-nope-0000000000");
      expect(refused.text.split("\n")[0]).toBe(
        "Refused: No load balancer is named k8s-nope-0000000000 in this account and region; nothing was planned.",
      );
    } finally {
      await t.close();
    }
  });

  it("--probe: DNS through the world's resolver and GET through its front, time-boxed, beside the trace", async () => {
    opened = await openAwsWorld("seed-recovered.yaml");
    const { w } = opened;
    const dir = await mkdtemp(join(tmpdir(), "unstuck-probe-"));
    try {
      const kubeconfig = join(dir, "kubeconfig");
      await w.kube.writeKubeconfig(kubeconfig);
      const out: string[] = [];
      const io = linesIo(out);
      const env = {
        ...w.aws.env(),
        UNSTUCK_DNS_RESOLVERS: w.dns.address,
        UNSTUCK_HTTP_PROBE_VIA: w.httpFront.url,
        UNSTUCK_HEALTH_PATHS: "/readyz",
      };
      const code = await runCli(
        ["trace", "test.example.com", "--probe", "--kubeconfig", kubeconfig],
        env,
        io,
      );
      expect(code).toBe(0);
      const text = out.join("\n");
      expect(text).toMatch(/test\.example\.com: DNS addresses \d+\.\d+\.\d+\.\d+/);
      // The origin names the deleted ALB: CloudFront answers 502 on every path.
      expect(text).toMatch(/FAIL GET https:\/\/test\.example\.com\/ → HTTP 502/);
      expect(text).toMatch(/FAIL GET https:\/\/test\.example\.com\/readyz → HTTP 502/);
      out.length = 0;
      await runCli(["trace", "test.example.com", "--probe", "--json", "--kubeconfig", kubeconfig], env, io);
      const json = JSON.parse(out.join("")) as { probes: { hostname: string; http: { ok: boolean }[] }[] };
      expect(json.probes[0]?.hostname).toBe("test.example.com");
      expect(json.probes[0]?.http.every((h) => !h.ok)).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("after the incident's recovery (six new ALBs, Route 53 fixed) only test.example.com is broken: its origin, with the new worker ALB as replacement", async () => {
    opened = await openAwsWorld("seed-recovered.yaml");
    const { w, c } = opened;
    const t = await traceNamespace(
      createAwsAdapter(c),
      createKubeAdapter(w.kube.kubeconfig()),
      "myapp",
      () => new Date(),
    );
    const broken = t.paths.filter((p) => p.verdict !== "ok").map((p) => p.hostname);
    expect(broken).toEqual(["test.example.com"]);
    expect(t.paths.filter((p) => p.verdict === "ok")).toHaveLength(6);
    const origin = t.paths
      .find((p) => p.hostname === "test.example.com")
      ?.hops.find((h) => h.kind === "origin");
    const worker = w.kube.store.get("networking.k8s.io/v1", "Ingress", "myapp", "myapp-worker-ingress") as {
      status: { loadBalancer: { ingress: { hostname: string }[] } };
    };
    expect(origin?.replacement?.dnsName).toBe(worker.status.loadBalancer.ingress[0]?.hostname);
    expect(origin?.replacement?.owner).toBe("Ingress myapp/myapp-worker-ingress");
  });
});
