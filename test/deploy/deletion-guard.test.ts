/**
 * The chart's namespace-deletion guard (templates/guard-namespace-deletion.yaml, values
 * guard.namespaceDeletion.enabled): a ValidatingAdmissionPolicy that refuses a namespace DELETE
 * without `unstuck.dev/deletion-approved` of the shape the bot writes (signed, with request id and
 * window), refuses any CREATE/UPDATE that sets, changes or removes that annotation unless it comes
 * from the bot's ServiceAccount, and refuses any change to it through the `namespaces/finalize` and
 * `namespaces/status` subresources (whose update strategies keep metadata) from anyone. Its CEL is
 * evaluated here with a conformant CEL evaluator (@bufbuild/cel) on crafted admission requests for
 * the namespace and each subresource, and on the old and new objects of the bot's real write: the
 * Kubernetes adapter's annotation patch sent to the kube simulator. (No real API server evaluates it
 * here.)
 */
import { run, isCelError } from "@bufbuild/cel";
import { execFile } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { GUARD_VALUE_PATTERN } from "../../src/approvals/deletion-guard-token.js";
import { createKubeAdapter } from "../../src/kube/client-node-adapter.js";
import type { KubePort } from "../../src/kube/port.js";
import { startKubeSim, type KubeObject, type KubeSim } from "../sim/kube/index.js";
import { testGuardSigner } from "../helpers/keys.js";

type Loose = ReturnType<typeof JSON.parse>;

const CHART = "deploy/chart/unstuck";
const NAMESPACE = "ops";
/** The workers' ServiceAccount (worker.enabled, the default): the release's only writer. */
const BOT = `system:serviceaccount:${NAMESPACE}:r-unstuck-worker`;
/** The Slack-facing bot's: it only reads, and the policy admits nothing of it. */
const SLACK_BOT = `system:serviceaccount:${NAMESPACE}:r-unstuck`;
const KEY = "unstuck.dev/deletion-approved";
const UID = "0b8c1e9e-6a52-4d35-9d7e-1d2f3c4b5a69";
const signer = testGuardSigner();
/** A value as the bot writes it: request `reqid…`, open for an hour. */
const approved = (name = "myapp", request = "aaaaaaaaaaaaaaaaaaaaaaaaaa"): string =>
  signer.sign({ namespace: name, uid: UID }, request, new Date(Date.now() + 3_600_000));

interface Policy {
  matchConstraints: { resourceRules: { operations: string[]; resources: string[] }[] };
  variables: { name: string; expression: string }[];
  validations: { expression: string; message: string }[];
}

/** JSON as CEL input: objects as maps, integers as CEL ints (as Kubernetes' CEL sees them). */
function toCel(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(toCel);
  if (v !== null && typeof v === "object") {
    return new Map(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, toCel(x)]));
  }
  if (typeof v === "number" && Number.isInteger(v)) return BigInt(v);
  return v;
}

function evaluate(expression: string, bindings: Record<string, unknown>): unknown {
  const result = run(expression, bindings as Parameters<typeof run>[1]);
  if (isCelError(result)) throw new Error(`CEL error in ${expression}: ${result.message}`);
  return result;
}

type Operation = "CREATE" | "UPDATE" | "DELETE";

/**
 * The policy's verdict: the messages of the failed validations (empty = admitted; undefined = the
 * request is not matched at all). `subResource` "" is the namespace itself.
 */
function admit(
  policy: Policy,
  operation: Operation,
  username: string,
  oldObject: unknown,
  object: unknown,
  subResource: "" | "finalize" | "status" = "",
): string[] | undefined {
  const resource = subResource === "" ? "namespaces" : `namespaces/${subResource}`;
  const matched = policy.matchConstraints.resourceRules.some(
    (r) => r.operations.includes(operation) && r.resources.includes(resource),
  );
  if (!matched) return undefined;
  // As the API server binds them: oldObject is null on CREATE, object is null on DELETE; the
  // request's subResource is omitted when empty (omitempty), present for a subresource.
  const request = toCel({
    userInfo: { username },
    operation,
    ...(subResource !== "" ? { subResource } : {}),
  });
  const bindings: Record<string, unknown> = {
    request,
    object: object === null ? null : toCel(object),
    oldObject: oldObject === null ? null : toCel(oldObject),
  };
  const variables = new Map<string, unknown>();
  for (const v of policy.variables) variables.set(v.name, evaluate(v.expression, { ...bindings, variables }));
  const failed: string[] = [];
  for (const v of policy.validations) {
    const ok = evaluate(v.expression, { ...bindings, variables });
    expect(typeof ok, v.expression).toBe("boolean");
    if (ok !== true) failed.push(v.message);
  }
  return failed;
}

function helmTemplate(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile("helm", ["template", ...args], (err, stdout, stderr) => {
      if (err) reject(new Error(`helm template failed (helm 3 is required; .ci/run installs it): ${stderr}`));
      else resolve(stdout);
    });
  });
}

function ns(name: string, annotations?: Record<string, string>, labels?: Record<string, string>): Loose {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name,
      uid: UID,
      resourceVersion: "41",
      labels: { "kubernetes.io/metadata.name": name, ...labels },
      ...(annotations ? { annotations } : {}),
    },
    spec: { finalizers: ["kubernetes"] },
    status: { phase: "Active" },
  };
}

describe("the namespace-deletion guard", () => {
  let policy: Policy;
  let binding: Loose;
  let finalizerOnly: Policy & { matchConditions: { expression: string }[] };
  let refuseDelete: string;
  let refuseMalformed: string;
  let refuseSubresource: string;
  let refuseAnnotation: string;

  beforeAll(async () => {
    const docs = parseAllDocuments(
      await helmTemplate([
        "r",
        CHART,
        "-n",
        NAMESPACE,
        "-f",
        `${CHART}/ci/default-values.yaml`,
        "--set",
        "guard.namespaceDeletion.enabled=true",
      ]),
    ).map((d) => d.toJS());
    const vap = docs.find(
      (d) =>
        d?.kind === "ValidatingAdmissionPolicy" &&
        String(d.metadata.name).endsWith("-block-namespace-deletion"),
    );
    expect(vap, "rendered with guard.namespaceDeletion.enabled").toBeDefined();
    binding = docs.find(
      (d) => d?.kind === "ValidatingAdmissionPolicyBinding" && d.spec.policyName === vap?.metadata.name,
    );
    policy = vap.spec as Policy;
    finalizerOnly = docs.find(
      (d) =>
        d?.kind === "ValidatingAdmissionPolicy" && String(d.metadata.name).endsWith("-finalizer-only-writes"),
    ).spec;
    [refuseDelete, refuseMalformed, refuseSubresource, refuseAnnotation] = policy.validations.map(
      (v) => v.message,
    ) as [string, string, string, string];
    expect(refuseDelete).toMatch(/approve-delete/);
    expect(refuseMalformed).toMatch(/not a value the bot writes/);
    expect(refuseSubresource).toMatch(/namespaces\/finalize or namespaces\/status/);
    expect(refuseAnnotation).toMatch(/unstuck\.dev\/deletion-approved/);
  });

  it("is off by default, and binds with Deny everywhere but the exempt system namespaces", async () => {
    const defaults = parseAllDocuments(
      await helmTemplate(["r", CHART, "-n", NAMESPACE, "-f", `${CHART}/ci/default-values.yaml`]),
    ).map((d) => d.toJS());
    expect(defaults.some((d) => String(d?.metadata?.name).endsWith("-block-namespace-deletion"))).toBe(false);
    expect(binding.spec.validationActions).toEqual(["Deny"]);
    expect(binding.spec.matchResources.namespaceSelector.matchExpressions).toEqual([
      {
        key: "kubernetes.io/metadata.name",
        operator: "NotIn",
        values: ["kube-system", "kube-public", "kube-node-lease", "default"],
      },
    ]);
  });

  it("repeats the exact shape of the value the bot writes (GUARD_VALUE_PATTERN)", () => {
    const shape = policy.validations[1]?.expression ?? "";
    expect(shape).toContain(`v.matches('${GUARD_VALUE_PATTERN}')`);
    expect(new RegExp(GUARD_VALUE_PATTERN).test(approved())).toBe(true);
  });

  it("refuses a namespace DELETE without the annotation or with one the bot did not write, and admits it with the bot's value", () => {
    expect(admit(policy, "DELETE", "kubernetes-admin", ns("myapp"), null)).toEqual([refuseDelete]);
    expect(admit(policy, "DELETE", "kubernetes-admin", ns("myapp", { other: "x" }), null)).toEqual([
      refuseDelete,
    ]);
    // Argo CD's controller, even the bot: no annotation, no deletion.
    expect(admit(policy, "DELETE", BOT, ns("myapp"), null)).toEqual([refuseDelete]);
    expect(
      admit(
        policy,
        "DELETE",
        "system:serviceaccount:argocd:argocd-application-controller",
        ns("myapp"),
        null,
      ),
    ).toEqual([refuseDelete]);
    expect(admit(policy, "DELETE", "kubernetes-admin", ns("myapp", { [KEY]: approved() }), null)).toEqual([]);
    expect(admit(policy, "DELETE", BOT, ns("myapp", { [KEY]: approved() }), null)).toEqual([]);
    // Present but not of the bot's shape: refused, whoever deletes.
    const good = approved();
    const malformed = [
      "abc",
      "",
      "aaaaaaaaaaaaaaaaaaaaaaaaaa",
      "true",
      good.replace(";sig=", ";mac="),
      good.slice(0, -1),
      `${good}x`,
      good.replace(/until=[^;]+/, "until=2030-01-01"),
      good.replace(/req=[^;]+/, "req=AAAAAAAAAAAAAAAAAAAAAAAAAA"),
      ` ${good}`,
      `${good}\n`,
    ];
    for (const value of malformed) {
      expect(admit(policy, "DELETE", "kubernetes-admin", ns("myapp", { [KEY]: value }), null), value).toEqual(
        [refuseMalformed],
      );
    }
  });

  it("matches namespaces/finalize and namespaces/status on UPDATE, and refuses any change to the annotation through them, from anyone", () => {
    const value = approved();
    const other = approved("myapp", "bbbbbbbbbbbbbbbbbbbbbbbbbb");
    const plain = ns("myapp", { team: "shop" });
    const open = ns("myapp", { team: "shop", [KEY]: value });
    const changes: [string, Loose, Loose][] = [
      ["added", plain, open],
      ["added with the first annotations", ns("myapp"), ns("myapp", { [KEY]: value })],
      ["changed", open, ns("myapp", { team: "shop", [KEY]: other })],
      ["emptied", open, ns("myapp", { team: "shop", [KEY]: "" })],
      ["removed", open, plain],
      ["removed with every annotation", open, ns("myapp")],
    ];
    const everyone = [
      BOT,
      "kubernetes-admin",
      "alice@example.com",
      "system:serviceaccount:kube-system:namespace-controller",
    ];
    for (const sub of ["finalize", "status"] as const) {
      for (const [what, before, after] of changes) {
        for (const user of everyone) {
          expect(admit(policy, "UPDATE", user, before, after, sub), `${sub}, ${user}: ${what}`).toEqual([
            refuseSubresource,
          ]);
        }
      }
    }
    // Leaving the annotation alone: what these subresources are for goes through.
    const terminating = (annotations?: Record<string, string>, finalizers = ["kubernetes"]): Loose => {
      const o = ns("myapp", annotations);
      o.metadata.deletionTimestamp = "2030-01-01T00:00:00Z";
      o.spec.finalizers = finalizers;
      o.status = { phase: "Terminating" };
      return o;
    };
    const annotationSets: (Record<string, string> | undefined)[] = [
      undefined,
      { team: "shop" },
      { team: "shop", [KEY]: value },
    ];
    for (const annotations of annotationSets) {
      for (const user of everyone) {
        // finalize: the namespace controller (or a human) empties spec.finalizers.
        expect(
          admit(policy, "UPDATE", user, terminating(annotations), terminating(annotations, []), "finalize"),
        ).toEqual([]);
        // status: a condition is written; another annotation changed alongside.
        const after = terminating({ ...annotations, note: "x" });
        after.status.conditions = [{ type: "NamespaceContentRemaining", status: "True" }];
        expect(admit(policy, "UPDATE", user, terminating(annotations), after, "status")).toEqual([]);
      }
    }
    // No DELETE or CREATE through a subresource is matched.
    expect(admit(policy, "DELETE", "alice@example.com", open, null, "finalize")).toBeUndefined();
    expect(admit(policy, "CREATE", "alice@example.com", null, open, "status")).toBeUndefined();
    expect(policy.matchConstraints.resourceRules).toContainEqual(
      expect.objectContaining({
        operations: ["UPDATE"],
        resources: ["namespaces/finalize", "namespaces/status"],
      }),
    );
  });

  it("lets only the bot's ServiceAccount set, change or remove the annotation", () => {
    const plain = ns("myapp", { team: "shop" });
    const open = ns("myapp", { team: "shop", [KEY]: "reqid" });
    const other = ns("myapp", { team: "shop", [KEY]: "forged" });
    const emptied = ns("myapp", { team: "shop", [KEY]: "" });
    const changes: [string, Loose, Loose][] = [
      ["set", plain, open],
      ["changed", open, other],
      ["emptied", open, emptied],
      ["removed", open, plain],
      ["removed with every annotation", open, ns("myapp")],
    ];
    for (const [what, before, after] of changes) {
      expect(admit(policy, "UPDATE", BOT, before, after), `bot: ${what}`).toEqual([]);
      expect(admit(policy, "UPDATE", "alice@example.com", before, after), `human: ${what}`).toEqual([
        refuseAnnotation,
      ]);
      // The same ServiceAccount name in another namespace is someone else.
      // Nor may the Slack-facing bot's: only the workers write.
      expect(admit(policy, "UPDATE", SLACK_BOT, before, after), `slack bot: ${what}`).toEqual([
        refuseAnnotation,
      ]);
      expect(
        admit(policy, "UPDATE", "system:serviceaccount:default:r-unstuck-worker", before, after),
        `other SA: ${what}`,
      ).toEqual([refuseAnnotation]);
      expect(
        admit(policy, "UPDATE", "system:serviceaccount:argocd:argocd-application-controller", before, after),
        `argo: ${what}`,
      ).toEqual([refuseAnnotation]);
    }
    // Created with the annotation already on: only by the bot.
    expect(admit(policy, "CREATE", "alice@example.com", null, open)).toEqual([refuseAnnotation]);
    expect(admit(policy, "CREATE", BOT, null, open)).toEqual([]);
  });

  it("admits every change that leaves the annotation as it is, by anyone", () => {
    const human = "alice@example.com";
    expect(admit(policy, "CREATE", human, null, ns("myapp"))).toEqual([]);
    expect(admit(policy, "UPDATE", human, ns("myapp"), ns("myapp", undefined, { team: "shop" }))).toEqual([]);
    expect(admit(policy, "UPDATE", human, ns("myapp"), ns("myapp", { note: "x" }))).toEqual([]);
    const open = ns("myapp", { [KEY]: "reqid" });
    expect(
      admit(policy, "UPDATE", human, open, ns("myapp", { [KEY]: "reqid", note: "x" }, { team: "shop" })),
    ).toEqual([]);
  });

  describe("on the bot's real write, through the adapter to the simulator", () => {
    let sim: KubeSim;
    let kube: KubePort;
    beforeAll(async () => {
      sim = await startKubeSim({ controllerIntervalMs: 200 });
      kube = createKubeAdapter(sim.kubeconfig(), { maxAttempts: 1 });
      sim.store.create({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "shop", labels: { team: "shop" }, annotations: { "example.com/owner": "shop" } },
      });
      sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "bare" } });
    });
    afterAll(async () => {
      await sim.stop();
    });

    async function botAnnotates(name: string, value: string | null): Promise<[KubeObject, KubeObject]> {
      const before = sim.store.get("v1", "Namespace", undefined, name);
      const seen = await kube.getNamespace(name);
      if (!before || !seen?.uid || !seen.resourceVersion || !kube.annotateNamespace) throw new Error(name);
      await kube.annotateNamespace(name, KEY, value, {
        uid: seen.uid,
        resourceVersion: seen.resourceVersion,
        annotations: seen.annotations,
      });
      const after = sim.store.get("v1", "Namespace", undefined, name);
      if (!after) throw new Error(`${name} gone`);
      return [before, after];
    }

    it("admits the bot opening and closing the guard, refuses the same write from anyone else, and the finalizer-only guard admits it too", async () => {
      for (const name of ["shop", "bare"]) {
        const value = approved(name);
        const [before, opened] = await botAnnotates(name, value);
        expect(opened.metadata?.annotations?.[KEY]).toBe(value);
        expect(admit(policy, "UPDATE", BOT, before, opened)).toEqual([]);
        expect(admit(policy, "UPDATE", "alice@example.com", before, opened)).toEqual([refuseAnnotation]);
        // The bot's write changes only its own annotation (and what the server bumps).
        expect(
          evaluate(finalizerOnly.matchConditions[0]?.expression ?? "false", {
            request: toCel({ userInfo: { username: BOT } }),
          }),
        ).toBe(true);
        const bindings = { object: toCel(opened), oldObject: toCel(before) };
        const variables = new Map<string, unknown>();
        for (const v of finalizerOnly.variables)
          variables.set(v.name, evaluate(v.expression, { ...bindings, variables }));
        for (const v of finalizerOnly.validations) {
          expect(evaluate(v.expression, { ...bindings, variables }), v.message).toBe(true);
        }
        // Now the namespace may be deleted; once closed, no longer.
        expect(admit(policy, "DELETE", "alice@example.com", opened, null)).toEqual([]);
        const [, closed] = await botAnnotates(name, null);
        expect(closed.metadata?.annotations?.[KEY]).toBeUndefined();
        expect(admit(policy, "UPDATE", BOT, opened, closed)).toEqual([]);
        expect(admit(policy, "DELETE", "alice@example.com", closed, null)).toEqual([refuseDelete]);
      }
      expect(sim.store.get("v1", "Namespace", undefined, "shop")?.metadata?.annotations).toEqual({
        "example.com/owner": "shop",
      });
    });
  });
});
