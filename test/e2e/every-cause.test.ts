/**
 * Every kind of cause the diagnosis can name, each shown by a world of the simulators, reached from
 * where a user starts: `npm run unstuck -- ns` (the CLI's entry, its services built from the
 * environment) and `/unstuck ns` (a runtime started from configuration). The table is typed over
 * every cause kind, so a new kind does not compile until it has a world here; each world checks
 * the cause line and the step the answer leads with.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CauseLink, NamespaceDiagnosis } from "../../src/diagnosis/types.js";
import type { KubeFaults } from "../sim/kube/server.js";
import {
  lostNodeWorld,
  namespacedCrd,
  namespaceFinalizerWorld,
  operatorFailingWorld,
  webhookBlockedWorld,
} from "../sim/kube/stuck-worlds.js";
import { eventually } from "../helpers/eventually.js";
import type { Scenario, ScenarioObject } from "../sim/scenario.js";
import { startWorld, type World } from "../sim/world.js";
import { askSlack, askTerminal } from "./ask-ns.js";

const SCENARIOS = "test/fixtures/scenarios";

interface CauseWorld {
  /** The scenario: a fixture file or a built world. */
  readonly scenario: () => Scenario | string;
  readonly namespace: string;
  /** A namespace condition that is `True` once the namespace controller has reported. */
  readonly reported?: string;
  /** The account is read too (the world's AWS simulator). */
  readonly aws?: true;
  /** The namespace controller does not run (kube-controller-manager down). */
  readonly stalled?: true;
  /** RBAC or discovery faults in front of the API server. */
  readonly faults?: KubeFaults;
  /** The cause line, as the terminal prints it after `Cause:` (or the whole first line). */
  readonly cause: RegExp;
  /** The step the answer leads with; `null`: no step at all. */
  readonly step: RegExp | null;
}

/** A terminating namespace whose content is `objects`, deleted `minutes` ago. */
function terminating(
  namespace: string,
  minutes: number,
  objects: ScenarioObject[],
  failingGroups: string[] = [],
): Scenario {
  const now = Date.now();
  return {
    name: `cause-${namespace}`,
    kube: {
      objects: [
        {
          apiVersion: "v1",
          kind: "Namespace",
          metadata: {
            name: namespace,
            deletionTimestamp: new Date(now - minutes * 60_000).toISOString().replace(/\.\d{3}Z$/, "Z"),
          },
          spec: { finalizers: ["kubernetes"] },
          status: { phase: "Terminating" },
        },
        ...objects,
      ],
      logs: [],
      failingGroups,
    },
  };
}

const crd = (group: string, kind: string, plural: string): ScenarioObject =>
  namespacedCrd(group, "v1alpha1", kind, plural);

const WORLDS: { readonly [K in CauseLink["kind"]]: CauseWorld } = {
  "namespace-missing": {
    scenario: () => namespaceFinalizerWorld({ namespace: "other" }),
    namespace: "nowhere",
    cause: /^Namespace nowhere: NOT FOUND$/m,
    step: /Check the name against `kubectl/,
  },
  "not-deleting": {
    scenario: () => `${SCENARIOS}/seed-incident.yaml`,
    namespace: "payments",
    cause: /^Namespace payments: ACTIVE$/m,
    step: null,
  },
  "discovery-failing": {
    scenario: () => terminating("metrics-ns", 20, [], ["metrics.k8s.io/v1beta1"]),
    namespace: "metrics-ns",
    reported: "NamespaceDeletionDiscoveryFailure",
    cause: /API discovery fails for metrics\.k8s\.io\/v1beta1/,
    step: /apiservice/i,
  },
  "finalizers-remain": {
    scenario: () =>
      terminating("held", 20, [
        {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "settings", namespace: "held", finalizers: ["example.com/hold"] },
        },
      ]),
    namespace: "held",
    reported: "NamespaceFinalizersRemaining",
    cause: /ConfigMap held\/settings keeps its finalizer example\.com\/hold/,
    // Nothing can say who removes it: forcing leads, after a step that says to find its owner.
    step: /finalize configmap\/settings -n held/,
  },
  "content-deleting": {
    // Deleted a moment ago, before the namespace controller's first pass: its content is all there.
    scenario: () =>
      terminating("rolling", 0, [
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "rolling" } },
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "b", namespace: "rolling" } },
      ]),
    namespace: "rolling",
    stalled: true,
    cause: /2 objects are still being removed/,
    step: /Nothing blocks it yet; check again in a minute/,
  },
  "content-unread": {
    scenario: () =>
      terminating("tenant", 15, [
        {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "leftover", namespace: "tenant", finalizers: ["example.com/hold"] },
        },
      ]),
    namespace: "tenant",
    reported: "NamespaceFinalizersRemaining",
    faults: { forbid: [{ verb: "list", resource: "configmaps" }] },
    cause: /the bot may not list configmaps \(RBAC refuses `list`\)/,
    step: /add `\{apiGroups: \[""\], resources: \["configmaps"\]\}` to `rbac\.explicitResources` and upgrade the release/,
  },
  "namespace-finalizers": {
    scenario: () => terminating("emptied", 20, []),
    namespace: "emptied",
    stalled: true,
    cause: /all content is gone but the namespace still carries finalizers kubernetes/,
    step: /namespace controller removes `kubernetes` within seconds/,
  },
  "controller-missing": {
    scenario: () =>
      terminating("scaled", 20, [
        crd("keda.sh", "ScaledObject", "scaledobjects"),
        {
          apiVersion: "keda.sh/v1alpha1",
          kind: "ScaledObject",
          metadata: { name: "worker", namespace: "scaled", finalizers: ["finalizer.keda.sh"] },
          spec: { scaleTargetRef: { name: "worker" } },
        },
      ]),
    namespace: "scaled",
    reported: "NamespaceFinalizersRemaining",
    cause: /KEDA operator is not installed/,
    step: /finalize scaledobject\/worker -n scaled/,
  },
  "controller-error": {
    scenario: () => operatorFailingWorld({ namespace: "shop" }),
    namespace: "shop",
    reported: "NamespaceFinalizersRemaining",
    cause: /bucket-operator is running but fails to finalize Bucket shop\/assets: failed to delete bucket/,
    step: /bucket-operator is running and says why it cannot finish Bucket shop\/assets/,
  },
  "security-group-held": {
    scenario: () => `${SCENARIOS}/seed-incident.yaml`,
    namespace: "myapp",
    aws: true,
    cause:
      /security group sg-0f1e2d3c4b5a69788 \(k8s-traffic-prodeks-e91bc47b4a\) is held by network interface eni-0c9d8e7f6a5b4c3d2/,
    step: /finalize ingress\/myapp-worker-ingress -n myapp/,
  },
  "delete-refused-by-webhook": {
    scenario: () => webhookBlockedWorld({ namespace: "policy" }),
    namespace: "policy",
    reported: "NamespaceDeletionContentFailure",
    cause:
      /webhook validate\.policy\.example\.com of ValidatingWebhookConfiguration policy-validator .* refuses the deletes/,
    step: /restore policy-system\/policy-webhook/,
  },
  "delete-refused": {
    // The same refusal, with the webhook configurations unreadable (RBAC): quoted as it is.
    scenario: () => webhookBlockedWorld({ namespace: "quoted" }),
    namespace: "quoted",
    reported: "NamespaceDeletionContentFailure",
    faults: { forbid: [{ verb: "list", resource: "validatingwebhookconfigurations" }] },
    cause:
      /the namespace controller cannot delete its content: "Internal error occurred: failed calling webhook "validate\.policy\.example\.com"/,
    step: /The namespace controller's deletes are refused: "Internal error occurred: failed calling webhook "validate\.policy\.example\.com".* Find what refuses them/,
  },
  "pods-on-lost-node": {
    scenario: () => lostNodeWorld({ namespace: "web", claim: null }),
    namespace: "web",
    reported: "NamespaceContentRemaining",
    cause:
      /2 pods stay Terminating \(web-0, web-1\) because their node ip-10-0-3-41\.ap-northeast-2\.compute\.internal is NotReady/,
    step: /kubectl delete node ip-10-0-3-41\.ap-northeast-2\.compute\.internal/,
  },
  "claim-in-use": {
    // The pod that mounts the claim is held by a finalizer of its own, on a Ready node.
    scenario: () => {
      const w = lostNodeWorld({ namespace: "data", pods: ["db-0"] });
      const objects = (w.kube?.objects ?? []).map((o) =>
        o.kind === "Pod"
          ? { ...o, metadata: { ...o.metadata, finalizers: ["example.com/backup-first"] } }
          : o.kind === "Node"
            ? {
                ...o,
                spec: {},
                status: { conditions: [{ type: "Ready", status: "True", reason: "KubeletReady" }] },
              }
            : o,
      );
      return { ...w, kube: { objects, logs: [], failingGroups: [] } };
    },
    namespace: "data",
    reported: "NamespaceFinalizersRemaining",
    cause:
      /PersistentVolumeClaim data\/data-web-0 keeps kubernetes\.io\/pvc-protection while db-0 mounts it \(pod db-0 is kept by its finalizer example\.com\/backup-first\)/,
    // The chain: the pod's finalizer, never the claim's pvc-protection.
    step: /finalize pod\/db-0 -n data/,
  },
  "namespace-finalizer": {
    scenario: () => namespaceFinalizerWorld({ namespace: "tenant-a" }),
    namespace: "tenant-a",
    cause: /still carries its finalizer example\.com\/tenant-cleanup/,
    step: /example\.com\/tenant-cleanup/,
  },
  "group-member-failing": {
    scenario: () => `${SCENARIOS}/ingress-group-shared.yaml`,
    namespace: "team-a",
    aws: true,
    cause: /team-b\/partner-api/,
    step: /team-b\/partner-api/,
  },
};

interface Started {
  readonly kubeconfig: string;
  readonly env: Record<string, string>;
  readonly close: () => Promise<void>;
}

async function start(w: CauseWorld): Promise<Started> {
  const world: World = await startWorld({
    scenario: w.scenario(),
    lbc: false,
    controllerIntervalMs: 50,
    ...(w.stalled === true ? { namespaceController: false } : {}),
  });
  if (w.faults !== undefined) world.kube.setFaults(w.faults);
  const dir = await mkdtemp(join(tmpdir(), "unstuck-every-cause-"));
  const kubeconfig = join(dir, "kubeconfig");
  await world.kube.writeKubeconfig(kubeconfig);
  if (w.reported !== undefined) {
    const condition = w.reported;
    await eventually(() => {
      const o = world.kube.store.get("v1", "Namespace", undefined, w.namespace);
      const conds = (o?.status as { conditions?: { type: string; status: string }[] } | undefined)
        ?.conditions;
      return conds?.some((c) => c.type === condition && c.status === "True") === true ? true : undefined;
    }, 15_000);
  }
  const env: Record<string, string> =
    w.aws === true
      ? {
          AWS_REGION: "ap-northeast-2",
          AWS_ENDPOINT_URL: world.aws.url,
          AWS_ACCESS_KEY_ID: "AKIAUNSTUCKTEST00001",
          AWS_SECRET_ACCESS_KEY: "x",
        }
      : {};
  return {
    kubeconfig,
    env,
    close: async () => {
      await world.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The step the terminal answer leads with: the one marked recommended, else the first. */
function leadingStep(text: string): string | undefined {
  const steps = text
    .slice(text.indexOf("\nNext steps:"))
    .split("\n")
    .filter((l) => /^ {2}\d+\. /.test(l));
  if (!text.includes("\nNext steps:")) return undefined;
  return steps.find((l) => l.endsWith("← recommended")) ?? steps[0];
}

/** What Slack shows of a plain sentence: mrkdwn-escaped, JSON-quoted inside the blocks. */
function slackForm(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

describe("every cause kind reaches the terminal and Slack from a world that shows it", () => {
  for (const [kind, w] of Object.entries(WORLDS) as [CauseLink["kind"], CauseWorld][]) {
    it(kind, async () => {
      const s = await start(w);
      try {
        const json = await askTerminal(["ns", w.namespace, "--kubeconfig", s.kubeconfig, "--json"], s.env);
        const d = JSON.parse(json.text) as NamespaceDiagnosis;
        expect(d.cause.map((c) => c.kind)).toContain(kind);

        const { code, text: out } = await askTerminal(
          ["ns", w.namespace, "--kubeconfig", s.kubeconfig],
          s.env,
        );
        expect(code).toBe(0);
        const head = out.split("\n").slice(0, 3).join("\n");
        expect(head).toMatch(w.cause);
        const lead = leadingStep(out);
        if (w.step === null) expect(lead).toBeUndefined();
        else expect(lead).toMatch(w.step);

        // Slack says the same cause: the terminal's sentence, as Slack escapes it.
        const sentence = /Cause: (.*)\.$/m.exec(out)?.[1];
        const card = await askSlack(w.namespace, s.kubeconfig, s.env);
        if (sentence !== undefined) {
          const start = slackForm(sentence.slice(0, 50));
          expect([start, JSON.stringify(start).slice(1, -1)].some((f) => card.includes(f))).toBe(true);
        } else expect(card).toContain(w.namespace);
      } finally {
        await s.close();
      }
    });
  }
});
