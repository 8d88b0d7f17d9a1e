/**
 * The chart as a platform team installs, upgrades and trusts it (deploy/chart/unstuck), rendered by the
 * real `helm` and asserted on the parsed YAML: EKS Pod Identity's egress, Redis credentials that are
 * the same on every render (GitOps), images by digest, PodDisruptionBudgets that never stall a drain,
 * the usual chart conventions (ServiceAccount, extra env/volumes/objects, scheduling, standard
 * security-context keys), a values schema that names a misspelt key, the `helm test` hook, and the
 * fleet's values (bot-only and workers-only releases, the clusters file, an AWS config file).
 * chart.test.ts covers RBAC, the admission policies and `kubectl apply` of every ci/ value set.
 */
import { execFile } from "node:child_process";
import { cp, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";

const CHART = "deploy/chart/unstuck";
const CI = (name: string): string => `${CHART}/ci/${name}-values.yaml`;
/** The bundled Redis's password every render here gives (the chart never invents one). */
const PASSWORD = ["--set", "redis.bundled.auth.password=test-only-password-0123"];
/** Public keys of the right shape (base64url of 32 bytes): the bot's and the workers'. */
const BOT_KEY = "ulQZJ8hGn8Fs2egDNaPItOobIWcpNrm66x9NcLNL1-Q";
const WORKER_KEY = "RBQDCz_gHvgMNooTiP70EM6atYGPwvIucOPO2vMuE0Q";
/** A fleet's hub: the Slack-facing bot alone, serving a clusters file and no cluster of its own. */
const HUB = [
  "--set",
  "worker.enabled=false",
  "--set",
  "bot.runWorkers=false",
  "--set",
  "clusters.prod-eu.region=eu-west-1",
  "--set",
  "clusters.prod-eu.publicKeys[0]=RBQDCz_gHvgMNooTiP70EM6atYGPwvIucOPO2vMuE0Q",
];
const BASE = [
  "--set",
  "image.repository=registry.example.com/unstuck",
  "--set",
  "aws.region=eu-west-1",
  "--set",
  `signing.botPublicKeys[0]=${BOT_KEY}`,
  "--set",
  `signing.workerPublicKeys[0]=${WORKER_KEY}`,
];

type Loose = ReturnType<typeof JSON.parse>;
interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: Loose;
}

/** `helm template r <chart> …`, `helm lint <chart> …` or `helm version`. */
function helm(
  args: readonly string[],
  chart = CHART,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const [verb = "template", ...rest] = args;
  const full =
    verb === "lint" ? [verb, chart, ...rest] : verb === "template" ? [verb, "r", chart, ...rest] : args;
  return new Promise((resolve) => {
    execFile("helm", full, { timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === "number" ? err.code : 127;
      resolve({ code, stdout, stderr });
    });
  });
}

async function render(args: readonly string[], chart = CHART): Promise<Obj[]> {
  const r = await helm(["template", "--namespace", "unstuck", ...args], chart);
  expect(r.code, r.stderr).toBe(0);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
}

/** The render fails, and its error names `message`. */
async function refused(args: readonly string[], message: string): Promise<void> {
  const r = await helm(["template", "--namespace", "unstuck", ...args]);
  expect(r.code, `${args.join(" ")} rendered`).not.toBe(0);
  expect(r.stderr).toContain(message);
}

const byKind = (objects: readonly Obj[], kind: string): Obj[] => objects.filter((o) => o.kind === kind);
const deploymentOf = (objects: readonly Obj[], component: string): Obj | undefined =>
  byKind(objects, "Deployment").find((d) => d.metadata.labels?.["app.kubernetes.io/component"] === component);
const podOf = (d: Obj | undefined): Loose => d?.spec.template.spec;
const envOf = (d: Obj | undefined): Record<string, Loose> =>
  Object.fromEntries((podOf(d).containers[0].env as { name: string }[]).map((e) => [e.name, e]));

beforeAll(async () => {
  const v = await helm(["version"]);
  expect(v.code, "helm 3 must be on PATH (`bash .ci/run` installs it)").toBe(0);
});

describe("EKS Pod Identity (aws.podIdentity)", () => {
  /** Egress rules that allow TCP port 80 anywhere, per NetworkPolicy. */
  const port80 = (objects: readonly Obj[]): [string, Loose][] =>
    byKind(objects, "NetworkPolicy").flatMap((p) =>
      ((p.spec.egress ?? []) as { ports?: { port: unknown }[] }[])
        .filter((r) => (r.ports ?? []).some((x) => x.port === 80))
        .map((r): [string, Loose] => [p.metadata.name, r]),
    );

  it("opens exactly the agent's addresses on TCP 80, in the bot's and the workers' policies, and nothing by default", async () => {
    expect(port80(await render(["-f", CI("default")]))).toEqual([]);
    const objects = await render(["-f", CI("default"), "--set", "aws.podIdentity=true"]);
    const rule = {
      to: [{ ipBlock: { cidr: "169.254.170.23/32" } }, { ipBlock: { cidr: "fd00:ec2::23/128" } }],
      ports: [{ protocol: "TCP", port: 80 }],
    };
    expect(port80(objects)).toEqual([
      ["r-unstuck", rule],
      ["r-unstuck-worker", rule],
    ]);
    // Redis's own policy stays closed.
    expect(
      byKind(objects, "NetworkPolicy").find((p) => p.metadata.name === "r-unstuck-redis")?.spec.egress,
    ).toEqual([]);
    // It is a way to get credentials instead of IRSA, not beside it.
    await refused(
      [
        ...BASE,
        ...PASSWORD,
        "--set",
        "aws.podIdentity=true",
        "--set",
        "aws.irsaRoleArn=arn:aws:iam::123456789012:role/x",
      ],
      "aws.podIdentity and aws.irsaRoleArn are two ways",
    );
  });

  describe("the install notes", () => {
    let dir: string;
    beforeAll(async () => {
      // NOTES.txt is rendered only by install/upgrade: a copy of the chart renders it as a ConfigMap.
      dir = await mkdtemp(join(tmpdir(), "unstuck-notes-"));
      await cp(CHART, join(dir, "unstuck"), { recursive: true });
      await rename(join(dir, "unstuck/templates/NOTES.txt"), join(dir, "unstuck/notes.txt"));
      await writeFile(
        join(dir, "unstuck/templates/notes-probe.yaml"),
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notes}\ndata:\n  text: {{ tpl (.Files.Get "notes.txt") . | toJson }}\n',
      );
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });
    const notes = async (args: readonly string[]): Promise<string> => {
      const objects = await render(["-f", CI("default"), ...args], join(dir, "unstuck"));
      return objects.find((o) => o.metadata.name === "notes")?.data.text as string;
    };

    it("recommend aws.podIdentity with a Pod Identity association when no IRSA role is set, and confirm the egress once it is on", async () => {
      const without = await notes([]);
      expect(without).toContain("set aws.podIdentity=true");
      expect(without).toContain("NetworkPolicy blocks the Pod Identity agent (169.254.170.23:80)");
      const on = await notes(["--set", "aws.podIdentity=true"]);
      // One association per ServiceAccount: the bot's and the workers' both call AWS.
      for (const account of ["r-unstuck", "r-unstuck-worker"])
        expect(on).toContain(
          `aws eks create-pod-identity-association --cluster-name <cluster> --namespace unstuck --service-account ${account} --role-arn <role>`,
        );
      expect(on).toContain(
        "allow egress to the Pod Identity agent (169.254.170.23 and fd00:ec2::23, port 80)",
      );
      const irsa = await notes(["--set", "aws.irsaRoleArn=arn:aws:iam::123456789012:role/unstuck"]);
      expect(irsa).toContain(
        "IRSA role arn:aws:iam::123456789012:role/unstuck on ServiceAccounts r-unstuck and r-unstuck-worker.",
      );
      expect(irsa).not.toContain("podIdentity");
    });

    it("give readiness commands that run as written (port-forward in the background, then curl)", async () => {
      const text = await notes([]);
      expect(text).not.toMatch(/port-forward[^\n]*&&/);
      expect(text).toContain(
        "port-forward svc/r-unstuck-ops 9090 &\n  curl -s localhost:9090/readyz; kill %1",
      );
    });

    it("tell a fleet's hub it needs no AWS credentials (its clusters' workers call AWS)", async () => {
      const hub = await notes(HUB);
      expect(hub).toContain("this hub calls no AWS API and needs no IRSA role or Pod Identity association");
      expect(hub).not.toContain("Credentials:");
      expect(hub).not.toContain("aws.podIdentity");
    });
  });
});

describe("privilege per role", () => {
  it("give a fleet's hub no cluster permission, no admission policy and no API token: it talks to Slack and Redis only", async () => {
    const hub = await render([...BASE, ...PASSWORD, ...HUB]);
    const kinds = hub.map((o) => o.kind);
    for (const kind of [
      "ClusterRole",
      "ClusterRoleBinding",
      "Role",
      "RoleBinding",
      "ValidatingAdmissionPolicy",
      "ValidatingAdmissionPolicyBinding",
    ])
      expect(kinds, kind).not.toContain(kind);
    const bot = deploymentOf(hub, "bot");
    expect(envOf(bot).UNSTUCK_ROLE.value).toBe("bot");
    expect(envOf(bot).UNSTUCK_CLUSTER_NAME).toBeUndefined();
    expect(podOf(bot).automountServiceAccountToken).toBe(false);
    // The same release serving a cluster of its own (workers beside it) keeps its grants and token.
    const own = await render([...BASE, ...PASSWORD, ...HUB, "--set", "clusterName=prod-eu"]);
    expect(own.map((o) => o.kind)).toContain("ClusterRole");
    expect(own.map((o) => o.kind)).toContain("ValidatingAdmissionPolicy");
    expect(podOf(deploymentOf(own, "bot")).automountServiceAccountToken).toBeUndefined();
  });
});

describe("install-path defaults", () => {
  it("schedule the bundled Redis like the bot unless told otherwise, pulling with the chart's secrets", async () => {
    const podOfRedis = (objects: readonly Obj[]): Loose =>
      byKind(objects, "StatefulSet").find((o) => o.metadata.name.endsWith("-redis"))?.spec.template.spec;
    const like = podOfRedis(
      await render([
        ...BASE,
        ...PASSWORD,
        "--set",
        "imagePullSecrets[0].name=regcred",
        "--set",
        "nodeSelector.pool=system",
        "--set",
        "tolerations[0].key=dedicated",
        "--set",
        "tolerations[0].operator=Exists",
        "--set",
        "priorityClassName=platform-critical",
      ]),
    );
    expect(like.imagePullSecrets).toEqual([{ name: "regcred" }]);
    expect(like.nodeSelector).toEqual({ pool: "system" });
    expect(like.tolerations).toEqual([{ key: "dedicated", operator: "Exists" }]);
    expect(like.priorityClassName).toBe("platform-critical");
    const own = podOfRedis(
      await render([
        ...BASE,
        ...PASSWORD,
        "--set",
        "nodeSelector.pool=system",
        "--set",
        "redis.bundled.nodeSelector.pool=storage",
        "--set",
        "redis.bundled.priorityClassName=redis-critical",
      ]),
    );
    expect(own.nodeSelector).toEqual({ pool: "storage" });
    expect(own.priorityClassName).toBe("redis-critical");
  });

  it("install on Kubernetes older than 1.30 without the admission policies, naming the value when one is on", async () => {
    const old = ["--kube-version", "1.28.3", ...BASE, ...PASSWORD];
    await refused(old, "guard.finalizerOnlyWrites needs Kubernetes >= 1.30");
    await refused(
      [
        ...old,
        "--set",
        "guard.finalizerOnlyWrites.enabled=false",
        "--set",
        "guard.namespaceDeletion.enabled=true",
      ],
      "guard.namespaceDeletion needs Kubernetes >= 1.30",
    );
    const objects = await render([...old, "--set", "guard.finalizerOnlyWrites.enabled=false"]);
    expect(byKind(objects, "Deployment").length).toBeGreaterThan(0);
    expect(byKind(objects, "ValidatingAdmissionPolicy")).toEqual([]);
  });

  it("give an ALB the receiver's health check path, unless the annotations given name one", async () => {
    const http = [
      ...BASE,
      ...PASSWORD,
      "--set",
      "slack.mode=http",
      "--set",
      "ingress.enabled=true",
      "--set",
      "ingress.host=unstuck.example.com",
    ];
    const alb = byKind(await render([...http, "--set", "ingress.className=alb"]), "Ingress")[0];
    expect(alb?.metadata.annotations).toEqual({ "alb.ingress.kubernetes.io/healthcheck-path": "/healthz" });
    const own = byKind(
      await render([
        ...http,
        "--set",
        "ingress.className=alb",
        "--set",
        "ingress.annotations.alb\\.ingress\\.kubernetes\\.io/healthcheck-path=/slack/health",
      ]),
      "Ingress",
    )[0];
    expect(own?.metadata.annotations).toEqual({
      "alb.ingress.kubernetes.io/healthcheck-path": "/slack/health",
    });
    const nginx = byKind(await render([...http, "--set", "ingress.className=nginx"]), "Ingress")[0];
    expect(nginx?.metadata.annotations).toBeUndefined();
  });

  it("let HTTPS out over IPv4 and IPv6 (an IPv6 cluster's API server, AWS's dual-stack endpoints)", async () => {
    const policies = byKind(await render([...BASE, ...PASSWORD]), "NetworkPolicy");
    const https = policies.flatMap((p) =>
      (p.spec.egress as { to?: { ipBlock?: { cidr: string } }[]; ports?: { port: number }[] }[]).filter((e) =>
        e.ports?.some((port) => port.port === 443),
      ),
    );
    expect(https.length).toBeGreaterThan(0);
    for (const rule of https) expect(rule.to?.map((t) => t.ipBlock?.cidr)).toEqual(["0.0.0.0/0", "::/0"]);
  });
});

describe("the bundled Redis's credentials", () => {
  const redisParts = (objects: readonly Obj[]): Loose =>
    objects
      .filter((o) => ["Secret", "StatefulSet", "Deployment"].includes(o.kind))
      .map((o) =>
        o.kind === "Secret"
          ? o
          : {
              name: o.metadata.name,
              env: o.spec.template.spec.containers[0].env,
              annotations: o.spec.template.metadata.annotations,
            },
      );

  it("are the same on every render (a GitOps sync writes no new Secret): a password given, or an existing Secret and key", async () => {
    const first = await render(["-f", CI("default")]);
    const second = await render(["-f", CI("default")]);
    expect(redisParts(second)).toEqual(redisParts(first));
    const secret = byKind(first, "Secret");
    expect(secret).toHaveLength(1);
    expect(Buffer.from(secret[0]?.data.password as string, "base64").toString()).toBe(
      parse(await readFile(CI("default"), "utf8")).redis.bundled.auth.password,
    );

    const existing = [
      ...BASE,
      "--set",
      "redis.bundled.auth.existingSecret=platform-redis",
      "--set",
      "redis.bundled.auth.existingSecretKey=redis-password",
    ];
    const a = await render(existing);
    expect(redisParts(await render(existing))).toEqual(redisParts(a));
    expect(byKind(a, "Secret")).toEqual([]);
    const ref = { name: "platform-redis", key: "redis-password" };
    for (const d of [...byKind(a, "Deployment"), ...byKind(a, "StatefulSet")]) {
      const env = d.spec.template.spec.containers[0].env as { name: string; valueFrom?: Loose }[];
      const password = env.find((e) => e.name === "REDIS_PASSWORD");
      expect(password?.valueFrom.secretKeyRef, d.metadata.name).toEqual(ref);
    }
  });

  it("refuse to render without one, naming the values; and refuse a password REDIS_URL cannot carry", async () => {
    await refused(BASE, "redis.bundled.auth.existingSecret");
    await refused(BASE, "or redis.bundled.auth.password is required when redis.bundled.enabled=true");
    await refused([...BASE, "--set", "redis.bundled.auth.password=short"], "redis.bundled.auth.password");
    await refused(
      [...BASE, "--set", "redis.bundled.auth.password=has@sign/and:colon0123"],
      "redis.bundled.auth.password",
    );
    // An external Redis needs none.
    await render([
      ...BASE,
      "--set",
      "redis.bundled.enabled=false",
      "--set",
      "redis.external.url=rediss://r.example:6379",
    ]);
  });
});

describe("images", () => {
  const REDIS_DIGEST = "sha256:3b73847e72874be07e6657b129a94761662b79bc0f679273757d4218573b2a98";

  it("pin the bundled Redis to an exact patch release by digest, and pull the bot by digest when image.digest is set", async () => {
    const objects = await render(["-f", CI("default")]);
    const redis = byKind(objects, "StatefulSet")[0]?.spec.template.spec.containers[0].image;
    expect(redis).toBe(`redis@${REDIS_DIGEST}`);
    const values = parse(await readFile(`${CHART}/values.yaml`, "utf8"));
    expect(values.redis.bundled.image.tag).toMatch(/^\d+\.\d+\.\d+-alpine$/);
    expect(podOf(deploymentOf(objects, "bot")).containers[0].image).toBe(
      "registry.example.com/unstuck:0.1.0",
    );

    const digest = `sha256:${"ab".repeat(32)}`;
    const pinned = await render(["-f", CI("default"), "--set", `image.digest=${digest}`]);
    for (const d of byKind(pinned, "Deployment")) {
      expect(podOf(d).containers[0].image).toBe(`registry.example.com/unstuck@${digest}`);
    }
    expect(byKind(pinned, "Pod")[0]?.spec.containers[0].image).toBe(`registry.example.com/unstuck@${digest}`);
    // An empty digest: by tag.
    const byTag = await render(["-f", CI("default"), "--set", "redis.bundled.image.digest="]);
    expect(byKind(byTag, "StatefulSet")[0]?.spec.template.spec.containers[0].image).toBe(
      `redis:${values.redis.bundled.image.tag as string}`,
    );
    await refused(
      ["-f", CI("default"), "--set", "image.digest=sha256:abc"],
      "image.digest: Does not match pattern",
    );
  });
});

describe("PodDisruptionBudgets", () => {
  it.each(["default", "socket-irsa", "fleet-workers"])(
    "(%s) let a drain evict an unhealthy pod (unhealthyPodEvictionPolicy AlwaysAllow)",
    async (set) => {
      const budgets = byKind(await render(["-f", CI(set)]), "PodDisruptionBudget");
      expect(budgets.length).toBeGreaterThan(0);
      for (const b of budgets) expect(b.spec.unhealthyPodEvictionPolicy, b.metadata.name).toBe("AlwaysAllow");
    },
  );
});

describe("the values schema", () => {
  it("refuses a misspelt key at any level, naming it, in helm template and helm lint", async () => {
    const r = await helm(["template", ...BASE, ...PASSWORD, "--set", "imagee.tag=x"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("Additional property imagee is not allowed");
    await refused(
      ["-f", CI("default"), "--set", "redis.bundled.auth.pasword=x"],
      "redis.bundled.auth: Additional property pasword is not allowed",
    );
    await refused(
      ["-f", CI("default"), "--set", "worker.podDisruptionBudget.maxUnavailabel=1"],
      "worker.podDisruptionBudget: Additional property maxUnavailabel",
    );
    await refused(
      ["-f", CI("default"), "--set", "podSecurityContext.runAsUsr=5"],
      "podSecurityContext: Additional property runAsUsr",
    );
    const lint = await helm(["lint", "--strict", "-f", CI("default"), "--set", "networkPolicy.enable=false"]);
    expect(lint.code).not.toBe(0);
    expect(lint.stdout + lint.stderr).toContain("networkPolicy: Additional property enable is not allowed");
  });

  it("says where the keys that moved went", async () => {
    await refused(
      ["-f", CI("default"), "--set", "securityContext.pod.runAsUser=5"],
      "securityContext.pod moved to podSecurityContext",
    );
    await refused(
      ["-f", CI("default"), "--set", "securityContext.container.privileged=false"],
      "securityContext.container moved",
    );
    await refused(
      ["-f", CI("default"), "--set", "config.extraEnv[0].name=A"],
      "config.extraEnv moved to extraEnv",
    );
  });
});

describe("chart conventions", () => {
  it("render an existing ServiceAccount, extra env, envFrom, volumes, objects (through tpl), priority and topology spread", async () => {
    const objects = await render(["-f", CI("fleet-workers")]);
    expect(byKind(objects, "ServiceAccount")).toEqual([]);
    const worker = deploymentOf(objects, "worker");
    const pod = podOf(worker);
    expect(pod.serviceAccountName).toBe("platform-unstuck");
    for (const b of byKind(objects, "ClusterRoleBinding"))
      expect(b.subjects[0].name).toBe("platform-unstuck");
    expect(pod.priorityClassName).toBe("platform-critical");
    expect(pod.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: "topology.kubernetes.io/zone",
        whenUnsatisfiable: "ScheduleAnyway",
        // Filled with the Deployment's own pods when the values give no selector.
        labelSelector: { matchLabels: worker?.spec.selector.matchLabels },
      },
    ]);
    const c = pod.containers[0];
    expect(envOf(worker).UNSTUCK_BLOCKED_AFTER_SECONDS.value).toBe("600");
    expect(c.envFrom).toEqual([{ configMapRef: { name: "platform-proxy-settings" } }]);
    expect(c.volumeMounts).toContainEqual({ name: "corp-ca", mountPath: "/etc/ssl/corp", readOnly: true });
    expect(pod.volumes).toContainEqual({ name: "corp-ca", configMap: { name: "corp-ca-bundle" } });
    const extra = objects.find((o) => o.metadata.name === "r-unstuck-platform-note");
    expect(extra).toMatchObject({
      kind: "ConfigMap",
      metadata: { namespace: "unstuck" },
      data: { owner: "platform" },
    });

    await refused(
      [...BASE, ...PASSWORD, "--set", "serviceAccount.create=false"],
      "serviceAccount.name is required when serviceAccount.create=false",
    );
    await refused(
      [...BASE, ...PASSWORD, "--set", "worker.serviceAccount.create=false"],
      "worker.serviceAccount.name is required when worker.serviceAccount.create=false",
    );
    // The bot's and the workers' own, each with its annotations; an IRSA role on both (both call AWS).
    const created = await render([
      ...BASE,
      ...PASSWORD,
      "--set",
      "serviceAccount.annotations.team=platform",
      "--set",
      "worker.serviceAccount.annotations.tier=workers",
      "--set",
      "aws.irsaRoleArn=arn:aws:iam::111111111111:role/unstuck",
    ]);
    const irsa = { "eks.amazonaws.com/role-arn": "arn:aws:iam::111111111111:role/unstuck" };
    expect(byKind(created, "ServiceAccount").map((o) => o.metadata)).toEqual([
      expect.objectContaining({ name: "r-unstuck", annotations: { team: "platform", ...irsa } }),
      expect.objectContaining({ name: "r-unstuck-worker", annotations: { tier: "workers", ...irsa } }),
    ]);
    expect(podOf(deploymentOf(created, "bot")).serviceAccountName).toBe("r-unstuck");
    expect(podOf(deploymentOf(created, "worker")).serviceAccountName).toBe("r-unstuck-worker");
  });

  it("put the pod and container security contexts under the standard keys", async () => {
    const objects = await render([
      "-f",
      CI("default"),
      "--set",
      "podSecurityContext.runAsUser=2000",
      "--set",
      "securityContext.runAsUser=2000",
    ]);
    for (const d of byKind(objects, "Deployment")) {
      expect(podOf(d).securityContext).toMatchObject({ runAsUser: 2000, runAsNonRoot: true, fsGroup: 1000 });
      expect(podOf(d).containers[0].securityContext).toMatchObject({
        runAsUser: 2000,
        readOnlyRootFilesystem: true,
      });
    }
  });

  it("ship a `helm test` hook pod that GETs the bot's /readyz and, in HTTP mode, the receiver", async () => {
    const socket = byKind(await render(["-f", CI("default")]), "Pod");
    expect(socket).toHaveLength(1);
    const pod = socket[0] as Obj;
    expect(pod.metadata.annotations?.["helm.sh/hook"]).toBe("test");
    expect(pod.spec.restartPolicy).toBe("Never");
    expect(pod.spec.automountServiceAccountToken).toBe(false);
    expect(pod.spec.containers[0].securityContext.readOnlyRootFilesystem).toBe(true);
    expect(pod.spec.containers[0].command.slice(3)).toEqual(["http://r-unstuck-ops.unstuck.svc:9090/readyz"]);
    const http = byKind(await render(["-f", CI("http-external-redis")]), "Pod")[0] as Obj;
    expect(http.spec.containers[0].command.slice(3)).toEqual([
      "http://r-unstuck-ops.unstuck.svc:9090/readyz",
      "http://r-unstuck.unstuck.svc:80/healthz",
    ]);
    const workers = byKind(await render(["-f", CI("fleet-workers")]), "Pod")[0] as Obj;
    expect(workers.spec.containers[0].command.slice(3)).toEqual([
      "http://r-unstuck-worker-ops.unstuck.svc:9090/readyz",
    ]);
    expect(byKind(await render(["-f", CI("default"), "--set", "tests.enabled=false"]), "Pod")).toEqual([]);
  });
});

describe("fleet values", () => {
  it("a workers-only release renders no bot Deployment, Service, Ingress or policy; its workers serve clusterName", async () => {
    const objects = await render(["-f", CI("fleet-workers")]);
    expect(deploymentOf(objects, "bot")).toBeUndefined();
    expect(byKind(objects, "Deployment")).toHaveLength(1);
    expect(byKind(objects, "Service").map((s) => s.metadata.name)).toEqual(["r-unstuck-worker-ops"]);
    expect(byKind(objects, "Ingress")).toEqual([]);
    expect(byKind(objects, "NetworkPolicy").map((p) => p.metadata.name)).toEqual(["r-unstuck-worker"]);
    const env = envOf(deploymentOf(objects, "worker"));
    expect(env.UNSTUCK_ROLE.value).toBe("worker");
    expect(env.UNSTUCK_CLUSTER_NAME.value).toBe("prod-eu");
    await refused(
      [
        ...BASE,
        ...PASSWORD,
        "--set",
        "bot.enabled=false",
        "--set",
        "slack.mode=http",
        "--set",
        "ingress.enabled=true",
        "--set",
        "ingress.host=h",
      ],
      "ingress.enabled needs bot.enabled",
    );
    await refused(
      [...BASE, ...PASSWORD, "--set", "bot.enabled=false", "--set", "worker.enabled=false"],
      "bot.enabled and worker.enabled are both false",
    );
  });

  it("a bot-only release renders no worker Deployment, and its bot runs no workers (UNSTUCK_ROLE=bot)", async () => {
    const objects = await render([
      ...BASE,
      ...PASSWORD,
      "--set",
      "worker.enabled=false",
      "--set",
      "bot.runWorkers=false",
    ]);
    expect(deploymentOf(objects, "worker")).toBeUndefined();
    expect(byKind(objects, "Deployment")).toHaveLength(1);
    expect(envOf(deploymentOf(objects, "bot")).UNSTUCK_ROLE.value).toBe("bot");
    // worker.enabled=false alone is today's combined Deployment.
    const combined = await render([...BASE, ...PASSWORD, "--set", "worker.enabled=false"]);
    expect(envOf(deploymentOf(combined, "bot")).UNSTUCK_ROLE.value).toBe("all");
    await refused(
      [
        ...BASE,
        ...PASSWORD,
        "--set",
        "worker.enabled=false",
        "--set",
        "bot.runWorkers=false",
        "--set",
        "guard.namespaceDeletion.enabled=true",
      ],
      "guard.namespaceDeletion needs a process running the workers in this release",
    );
  });

  it("mounts the clusters file (UNSTUCK_CLUSTERS_FILE) and the AWS config file (AWS_CONFIG_FILE) from ConfigMaps, and rolls the pods when they change", async () => {
    const values = parse(await readFile(CI("fleet-workers"), "utf8"));
    const objects = await render(["-f", CI("fleet-workers")]);
    const clusters = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === "r-unstuck-clusters");
    expect(parse(clusters?.data["clusters.yaml"] as string)).toEqual({ clusters: values.clusters });
    const aws = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === "r-unstuck-aws-config");
    expect(aws?.data.config).toBe(values.aws.config);
    const worker = deploymentOf(objects, "worker");
    const env = envOf(worker);
    expect(env.UNSTUCK_CLUSTERS_FILE.value).toBe("/etc/unstuck/clusters/clusters.yaml");
    expect(env.AWS_CONFIG_FILE.value).toBe("/etc/unstuck/aws/config");
    // The clusters give the regions: no AWS_REGION of their own.
    expect(env.AWS_REGION).toBeUndefined();
    const pod = podOf(worker);
    expect(pod.containers[0].volumeMounts).toEqual(
      expect.arrayContaining([
        { name: "clusters", mountPath: "/etc/unstuck/clusters", readOnly: true },
        { name: "aws-config", mountPath: "/etc/unstuck/aws", readOnly: true },
      ]),
    );
    expect(pod.volumes).toEqual(
      expect.arrayContaining([
        { name: "clusters", configMap: { name: "r-unstuck-clusters" } },
        { name: "aws-config", configMap: { name: "r-unstuck-aws-config" } },
      ]),
    );
    const changed = await render(["-f", CI("fleet-workers"), "--set", "clusters.prod-us.region=us-west-2"]);
    const annotations = worker?.spec.template.metadata.annotations as Record<string, string>;
    const after = deploymentOf(changed, "worker")?.spec.template.metadata.annotations as Record<
      string,
      string
    >;
    expect(after["checksum/clusters"]).not.toBe(annotations["checksum/clusters"]);
    expect(after["checksum/aws-config"]).toBe(annotations["checksum/aws-config"]);
    // Without them: nothing mounted, nothing set (a single-cluster install as before).
    const single = envOf(deploymentOf(await render(["-f", CI("default")]), "worker"));
    expect(single.UNSTUCK_CLUSTERS_FILE).toBeUndefined();
    expect(single.AWS_CONFIG_FILE).toBeUndefined();
  });

  it("refuses a clusterName outside `clusters`, and workers of a fleet that name no cluster", async () => {
    await refused(
      ["-f", CI("fleet-workers"), "--set", "clusterName=prod-ap"],
      'clusterName "prod-ap" is not one of the clusters in `clusters` (prod-eu, prod-us)',
    );
    await refused(
      ["-f", CI("fleet-workers"), "--set", "clusterName="],
      "clusterName is required: this release runs workers",
    );
    // The bot of a fleet serves every cluster: it needs no clusterName.
    const hub = await render([
      ...BASE,
      ...PASSWORD,
      "--set",
      "worker.enabled=false",
      "--set",
      "bot.runWorkers=false",
      "--set",
      "clusters.a.region=eu-west-1",
      "--set",
      `clusters.a.publicKeys[0]=${WORKER_KEY}`,
      "--set",
      "clusters.b.region=us-east-1",
      "--set",
      "clusters.b.publicKeys[0]=H0yGRN0UZhl2SUhHoDF5kMt5hoeg-D9OuRPw9J5DDHA",
    ]);
    expect(envOf(deploymentOf(hub, "bot")).UNSTUCK_CLUSTERS_FILE.value).toBe(
      "/etc/unstuck/clusters/clusters.yaml",
    );
    expect(envOf(deploymentOf(hub, "bot")).UNSTUCK_CLUSTER_NAME).toBeUndefined();
    await refused(
      ["-f", CI("fleet-workers"), "--set", "clusters.prod-eu.regoin=x"],
      "Additional property regoin is not allowed",
    );
  });
});

describe("an external Redis behind Sentinel (redis.external.sentinelPorts)", () => {
  const EXTERNAL = [...BASE, "--set", "redis.bundled.enabled=false"];
  /** The TCP ports each of the bot's and the workers' NetworkPolicies opens to Redis (the rule with the Redis port). */
  const redisPorts = (objects: readonly Obj[]): Record<string, unknown[]> =>
    Object.fromEntries(
      byKind(objects, "NetworkPolicy").map((p) => {
        const rules = (p.spec.egress ?? []) as { to?: unknown; ports?: { port: unknown }[] }[];
        const rule = rules.find((r) => r.to === undefined && (r.ports ?? []).some((x) => x.port === 6379));
        return [p.metadata.name, (rule?.ports ?? []).map((x) => x.port)];
      }),
    );

  it("opens only the Redis port without Sentinel, as before", async () => {
    const objects = await render([
      ...EXTERNAL,
      "--set-string",
      "redis.external.url=rediss://:t@redis.example:6379",
    ]);
    expect(redisPorts(objects)).toEqual({ "r-unstuck": [6379], "r-unstuck-worker": [6379] });
  });

  it("opens Sentinel's default port 26379 for a redis+sentinel:// URL, and the ports given otherwise", async () => {
    const url = "redis+sentinel://:t@s1.example:26379\\,s2.example:26379/mymaster";
    const byUrl = await render([...EXTERNAL, "--set-string", `redis.external.url=${url}`]);
    expect(redisPorts(byUrl)).toEqual({ "r-unstuck": [6379, 26379], "r-unstuck-worker": [6379, 26379] });
    expect(envOf(deploymentOf(byUrl, "bot")).REDIS_URL.value).toBe(url.replace("\\", ""));
    // A URL in a Secret is not read by the chart: its sentinels' ports are named.
    const bySecret = await render([
      ...EXTERNAL,
      "--set",
      "redis.external.urlSecret.name=redis-url",
      "--set",
      "redis.external.sentinelPorts={26379,26380}",
    ]);
    expect(redisPorts(bySecret)).toEqual({
      "r-unstuck": [6379, 26379, 26380],
      "r-unstuck-worker": [6379, 26379, 26380],
    });
    // Given ports replace the default, and a sentinel on the Redis port is not opened twice.
    const given = await render([
      ...EXTERNAL,
      "--set-string",
      `redis.external.url=${url}`,
      "--set",
      "redis.external.sentinelPorts={6379,5000}",
    ]);
    expect(redisPorts(given)).toEqual({ "r-unstuck": [6379, 5000], "r-unstuck-worker": [6379, 5000] });
  });

  it("refuses a misspelt key and a port out of range", async () => {
    await refused(
      [...EXTERNAL, "--set", "redis.external.sentinelPort=26379"],
      "Additional property sentinelPort is not allowed",
    );
    await refused([...EXTERNAL, "--set", "redis.external.sentinelPorts={70000}"], "sentinelPorts");
  });
});
