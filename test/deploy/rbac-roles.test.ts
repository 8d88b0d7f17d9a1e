/**
 * Privilege per role, measured: the chart is rendered, its ClusterRoles and bindings are loaded
 * into the Kubernetes simulator with RBAC on (`test/sim/kube/rbac.ts`), and a bot process and a
 * worker process are started as `main.ts` starts them (`UNSTUCK_ROLE=bot` / `worker`), each with a
 * kubeconfig of its own ServiceAccount's token — or, as a release with `worker.enabled=false`
 * renders it, one combined process (`all`). Then what a user does: a diagnosis, a finalizer
 * removal requested, approved and executed, the namespace wait, a deletion guard opened and closed
 * again, the stuck-namespace watcher's post.
 *
 * Every request either role makes must be allowed (no 403: the grants are enough), and every grant
 * either role holds must have been used by that role (no grant beyond what its code calls). The
 * grants made from a list a value sets (`rbac.explicitResources`, `rbac.finalizerTargets`) are
 * held to the verbs the code used on the types it touched.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { execFile } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import type { Runtime } from "../../src/runtime.js";
import { eventually, pause } from "../helpers/eventually.js";
import { startAwsSim, type AwsSim } from "../sim/aws/index.js";
import { startKubeSim, type KubeSim } from "../sim/kube/index.js";
import type { KubeObject } from "../sim/kube/object.js";
import { lostNodeWorld, namespacedCrd, webhookBlockedWorld } from "../sim/kube/stuck-worlds.js";
import { loadScenario, type Scenario, type ScenarioObject } from "../sim/scenario.js";
import type { RequestRecord } from "../sim/kube/server.js";
import { clickButton } from "../helpers/slack-click.js";
import { postSigned, slashCommandBody, type FakeSlack } from "../sim/slack/index.js";
import { buttonValue } from "../e2e/block-kit.js";
import { startTestWorld, type TestWorld } from "../helpers/world.js";

const CHART = "deploy/chart/unstuck";
const SEED = "test/fixtures/scenarios/seed-incident.yaml";
const RELEASE = "r";
const NAMESPACE = "unstuck";
const SECRET = "rbac-roles-signing-secret";
const TOKEN = "xoxb-rbac-roles-token";
const CHANNEL = "C0INCIDENT";
const WATCH = "C0WATCH";
const REQUESTER = "U0ONCALL1";
const APPROVER = "U0APPROVER1";
const APPROVE = "approval:approve";

type Loose = ReturnType<typeof JSON.parse>;
interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [key: string]: Loose;
}

function template(args: readonly string[]): Promise<Obj[]> {
  return new Promise((resolve, reject) => {
    execFile(
      "helm",
      ["template", RELEASE, CHART, "--namespace", NAMESPACE, ...args],
      { timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err !== null) reject(new Error(`helm template: ${stderr || err.message}`));
        else
          resolve(
            parseAllDocuments(stdout)
              .map((d) => d.toJS() as Obj | null)
              .filter((o): o is Obj => o !== null),
          );
      },
    );
  });
}

/** `verb group/resource` of a served resource request (discovery and /version are not RBAC's). */
function accessOf(r: RequestRecord): string | undefined {
  const m = /^\/(?:api\/v1|apis\/([^/]+)\/[^/]+)(\/.*)?$/.exec(r.path);
  if (!m) return undefined;
  const group = m[1] ?? "";
  let rest = (m[2] ?? "").split("/").filter((p) => p !== "");
  if (rest.length === 0) return undefined;
  if (rest[0] === "namespaces" && rest.length >= 3) rest = rest.slice(2);
  const [resource, name, sub] = rest;
  const watch = /[?&]watch=(true|1)/.test(r.query);
  const verb =
    r.method === "GET"
      ? watch
        ? "watch"
        : name !== undefined
          ? "get"
          : "list"
      : r.method === "PATCH"
        ? "patch"
        : r.method.toLowerCase();
  return `${verb} ${group}/${resource ?? ""}${sub !== undefined ? `/${sub}` : ""}`;
}

/** One namespace Terminating whose controller has not counted its content yet: a full scan. */
const UNCOUNTED: KubeObject[] = [
  {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "uncounted", deletionTimestamp: new Date(Date.now() - 20 * 60_000).toISOString() },
    spec: { finalizers: ["kubernetes"] },
    status: { phase: "Terminating" },
  },
  {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "held", namespace: "uncounted", finalizers: ["example.com/config-sync"] },
  },
];

/** CRDs of a cluster running the Load Balancer Controller: its TargetGroupBinding, the Gateway API's. */
const CRDS: ScenarioObject[] = [
  ["elbv2.k8s.aws", "v1beta1", "TargetGroupBinding", "targetgroupbindings"],
  ["gateway.networking.k8s.io", "v1", "Gateway", "gateways"],
  ["gateway.networking.k8s.io", "v1", "HTTPRoute", "httproutes"],
  ["gateway.networking.k8s.io", "v1", "GRPCRoute", "grpcroutes"],
].map(([group = "", version = "", kind = "", plural = ""]) => namespacedCrd(group, version, kind, plural));

/** The seed incident, a pod held by a lost node, a webhook refusing deletes, an uncounted namespace. */
function world(): Scenario {
  const seed = loadScenario(SEED);
  const others = [lostNodeWorld({ namespace: "lost" }), webhookBlockedWorld({ namespace: "hooked" })];
  return {
    ...seed,
    kube: {
      objects: [...(seed.kube?.objects ?? []), ...others.flatMap((w) => w.kube?.objects ?? []), ...CRDS],
      logs: [...(seed.kube?.logs ?? []), ...others.flatMap((w) => w.kube?.logs ?? [])],
      failingGroups: [],
    },
  };
}

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** Every `verb group/resource` a rule grants (wildcards kept as they are). */
function accesses(rule: Rule): string[] {
  return rule.verbs.flatMap((v) =>
    rule.apiGroups.flatMap((g) => rule.resources.map((r) => `${v} ${g}/${r}`)),
  );
}

/** What `account` is granted, `verb group/resource` → the ClusterRole granting it. */
function grantsOf(rendered: readonly Obj[], account: string): Map<string, string> {
  const roles = new Map(
    rendered.filter((o) => o.kind === "ClusterRole").map((o) => [o.metadata.name, (o.rules ?? []) as Rule[]]),
  );
  const grants = new Map<string, string>();
  for (const b of rendered.filter((o) => o.kind === "ClusterRoleBinding")) {
    const subjects = (b.subjects ?? []) as { name: string; namespace: string }[];
    if (!subjects.some((x) => `system:serviceaccount:${x.namespace}:${x.name}` === account)) continue;
    const role = String(b.roleRef.name);
    for (const rule of roles.get(role) ?? []) for (const a of accesses(rule)) grants.set(a, role);
  }
  return grants;
}

/**
 * What `account` asked for and was refused, and what it holds and never asked for. The finalizer
 * targets (rbac.finalizerTargets, a list a value sets) go through one code path for every type: a
 * grant there counts as used when the account used the same verb on another type of that role.
 */
function inventory(
  rendered: readonly Obj[],
  requests: readonly RequestRecord[],
  account: string,
): { refused: string[]; unused: string[] } {
  const used = new Map<string, number[]>();
  for (const r of requests.filter((x) => x.user === account)) {
    const a = accessOf(r);
    if (a !== undefined) used.set(a, [...(used.get(a) ?? []), r.status]);
  }
  const grants = grantsOf(rendered, account);
  const byRole = (role: string, verb: string): boolean =>
    [...grants].some(([a, r]) => r === role && a.startsWith(`${verb} `) && used.has(a));
  const generic = /-(finalizer-targets|remove-finalizers)$/;
  return {
    refused: [...used].filter(([, codes]) => codes.includes(403)).map(([a]) => a),
    unused: [...grants]
      .filter(([a, role]) => !used.has(a) && !(generic.test(role) && byRole(role, a.split(" ")[0] ?? "")))
      .map(([a]) => a),
  };
}

type Role = "bot" | "worker" | "all";

/** The two layouts a single-cluster release renders: bot and workers apart, or one combined Deployment. */
const LAYOUTS: readonly { name: string; args: readonly string[]; roles: readonly Role[] }[] = [
  { name: "bot and workers apart", args: [], roles: ["worker", "bot"] },
  { name: "one combined Deployment", args: ["--set", "worker.enabled=false"], roles: ["all"] },
];

describe.each(LAYOUTS)(
  "privilege per role ($name), as the rendered chart grants it and the code uses it",
  (layout) => {
    let sim: KubeSim;
    let aws: AwsSim;
    let w: TestWorld;
    let fake: FakeSlack;
    let dir: string;
    let rendered: Obj[];
    const runtimes = new Map<Role, Runtime>();
    const accounts = new Map<Role, string>();
    /** The role that receives Slack's commands and clicks. */
    const slackRole: Role = layout.roles.includes("all") ? "all" : "bot";
    let events = "";

    beforeAll(async () => {
      rendered = await template([
        "-f",
        `${CHART}/ci/default-values.yaml`,
        "--set",
        "guard.namespaceDeletion.enabled=true",
        "--set",
        `config.watchChannel=${WATCH}`,
        ...layout.args,
      ]);
      sim = await startKubeSim({ scenario: world(), namespaceController: false, rbac: {} });
      // The namespace controller reports once on the worlds, and not on the namespace deleted after.
      await sim.reconcileNow();
      for (const o of UNCOUNTED) sim.store.load(o);
      for (const o of rendered) {
        if (o.apiVersion.startsWith("rbac.authorization.k8s.io/")) sim.store.create(o);
      }
      aws = await startAwsSim({ scenario: loadScenario(SEED).aws });
      dir = await mkdtemp(join(tmpdir(), "unstuck-rbac-"));
      // Each role's services from its configuration: its own KUBECONFIG (its ServiceAccount), the AWS env.
      w = await startTestWorld({
        token: TOKEN,
        secret: SECRET,
        label: "rbac-roles",
        simServices: false,
        env: {
          UNSTUCK_APPROVERS: APPROVER,
          UNSTUCK_CHANNELS: CHANNEL,
          UNSTUCK_WATCH_CHANNEL: WATCH,
          UNSTUCK_BLOCKED_AFTER_SECONDS: "0",
          UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
          UNSTUCK_WAIT_INTERVAL_SECONDS: "1",
          UNSTUCK_DELETION_WINDOW_SECONDS: "2",
          UNSTUCK_CLUSTER_NAME: "prod-eks",
          AWS_REGION: "ap-northeast-2",
          AWS_ENDPOINT_URL: aws.url,
          AWS_ACCESS_KEY_ID: "AKIAUNSTUCKTEST00001",
          AWS_SECRET_ACCESS_KEY: "x",
        },
        boot: false,
      });
      fake = w.fake;
      const make = async (role: Role): Promise<string> => {
        const component = role === "worker" ? "worker" : "bot";
        const pod = rendered.find(
          (o) =>
            o.kind === "Deployment" &&
            o.spec.template.metadata.labels["app.kubernetes.io/component"] === component,
        );
        expect(pod?.spec.template.spec.containers[0].env).toContainEqual({
          name: "UNSTUCK_ROLE",
          value: role,
        });
        const account = `system:serviceaccount:${NAMESPACE}:${String(pod?.spec.template.spec.serviceAccountName)}`;
        accounts.set(role, account);
        const kubeconfig = join(dir, `${role}.kubeconfig`);
        await sim.writeKubeconfig(kubeconfig, { user: account });
        // Started; a worker (no signing secret: it receives nothing from Slack) listens on no port.
        const booted = await w.boot({ role, env: { KUBECONFIG: kubeconfig } });
        runtimes.set(role, booted.runtime);
        return booted.events;
      };
      for (const role of layout.roles) {
        const url = await make(role);
        if (url !== "") events = url;
      }
    }, 60_000);

    afterAll(async () => {
      await w.stop();
      await aws.stop();
      await sim.stop();
      await rm(dir, { recursive: true, force: true });
    });

    const slash = async (text: string, id: string): Promise<void> => {
      const res = await postSigned(
        events,
        SECRET,
        slashCommandBody({ text, userId: REQUESTER, channelId: CHANNEL, responseUrl: fake.responseUrl(id) }),
      );
      expect(res.status).toBe(200);
    };

    /** `ns <namespace>` through Slack, to its answer (in the channel, or to the asker). */
    const ask = async (namespace: string): Promise<string> => {
      const id = `ns-${namespace}`;
      const calls = fake.calls().length;
      const responses = fake.responses().length;
      await slash(`ns ${namespace}`, id);
      return eventually(
        () => {
          const said = [
            ...fake
              .calls()
              .slice(calls)
              .filter((c) => c.method === "chat.postMessage" && c.body["channel"] === CHANNEL)
              .map((c) => JSON.stringify(c.body)),
            ...fake
              .responses()
              .slice(responses)
              .map((r) => JSON.stringify(r)),
          ].find((t) => t.includes(namespace) && !t.includes("Diagnosing"));
          return said;
        },
        20_000,
        `the answer about ${namespace}`,
      );
    };

    /** A request filed through the bot, approved by a second person, executed by a worker. */
    const approved = async (text: string): Promise<void> => {
      const calls = fake.calls().length;
      await slash(text, `request-${text.slice(0, 12)}`);
      const posted = await eventually(
        () =>
          fake
            .calls()
            .slice(calls)
            .find((c) => c.method === "chat.postMessage" && JSON.stringify(c.body).includes(APPROVE)),
        20_000,
        "the request's message",
      );
      const id = buttonValue(posted.body["blocks"], APPROVE) ?? "";
      const ts = String(posted.response?.["ts"]);
      const bot = runtimes.get(slackRole);
      await eventually(
        async () => ((await bot?.workflow.get(id))?.message !== undefined ? true : undefined),
        10_000,
        "request attached to its message",
      );
      await clickButton({ events, fake, secret: SECRET, channel: CHANNEL }, APPROVE, id, APPROVER, ts);
      await eventually(
        async () => ((await bot?.workflow.get(id))?.state === "DONE" ? true : undefined),
        30_000,
        `DONE: ${text}`,
      );
    };

    it("each role's requests are all granted, and each role's grants are all used", async () => {
      // The bot: diagnoses (a condition-led one, a full scan, a lost node, a refusing webhook, a typo).
      await ask("myapp");
      for (const ns of ["lost", "hooked"]) await ask(ns);
      const uncounted = await ask("uncounted");
      // Secrets are not granted by default: the answer says it could not look.
      expect(uncounted).toContain("Could not list secrets");
      expect(await ask("myap")).toContain("Did you mean");
      // Approved changes, executed by a worker: a finalizer removed, a deletion guard opened and,
      // after its two-second window, closed again by the workers' reconcile loop.
      await approved(
        'finalize ingress/myapp-worker-ingress -n myapp --reason "cause confirmed: SG held by an ENI; recovery first"',
      );
      await approved('approve-delete ns payments --reason "duplicate of the platform app; its owner agreed"');
      await eventually(
        () =>
          sim.store.get("v1", "Namespace", undefined, "payments")?.metadata?.annotations?.[
            "unstuck.dev/deletion-approved"
          ] === undefined
            ? true
            : undefined,
        20_000,
        "the guard closed again",
      );
      // The watcher (the workers') has posted the stuck namespaces' diagnoses.
      await eventually(
        () =>
          fake
            .calls()
            .some((c) => c.body["channel"] === WATCH && JSON.stringify(c.body).includes("uncounted"))
            ? true
            : undefined,
        20_000,
        "the watcher's post about the uncounted namespace",
      );
      // Stopped, so that the watches are recorded too (once the simulator has seen them close).
      for (const r of runtimes.values()) await r.stop();
      await pause(500);

      for (const role of layout.roles) {
        const { refused, unused } = inventory(rendered, sim.requests(), accounts.get(role) ?? "");
        // Only the designed refusal (Secrets, which the answers said they could not look at).
        expect(refused, `${role}: refused`).toEqual(["list /secrets"]);
        expect(unused, `${role}: granted, never used`).toEqual([]);
      }
      if (slackRole === "all") {
        // One ServiceAccount for everything: it is the writer.
        const all = grantsOf(rendered, accounts.get("all") ?? "");
        expect(all.get("patch networking.k8s.io/ingresses")).toBe("r-unstuck-remove-finalizers");
        return;
      }
      const bot = grantsOf(rendered, accounts.get("bot") ?? "");
      const worker = grantsOf(rendered, accounts.get("worker") ?? "");
      // Only the workers write (and watch namespaces: the watcher runs where they run).
      expect([...bot.keys()].filter((a) => !/^(get|list|watch) /.test(a))).toEqual([]);
      expect([...bot.keys()].filter((a) => a === "watch /namespaces")).toEqual([]);
      expect(worker.get("patch networking.k8s.io/ingresses")).toBe("r-unstuck-remove-finalizers");
      expect(worker.get("patch /namespaces")).toBe("r-unstuck-open-deletion-guard");

      // The check fails on a grant beyond the code's calls: the bot bound to the writers' roles.
      const widened = rendered.map((o) =>
        o.kind === "ClusterRoleBinding" && /-(remove-finalizers|open-deletion-guard)$/.test(o.metadata.name)
          ? {
              ...o,
              subjects: [...o.subjects, { kind: "ServiceAccount", name: "r-unstuck", namespace: NAMESPACE }],
            }
          : o,
      );
      expect(inventory(widened, sim.requests(), accounts.get("bot") ?? "").unused).toEqual(
        expect.arrayContaining(["patch networking.k8s.io/ingresses", "patch /namespaces"]),
      );
    }, 180_000);
  },
);
