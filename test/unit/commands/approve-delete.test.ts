/**
 * `approve-delete ns`: its grammar (bad input is a clear, specific error and touches nothing), the
 * action it makes (`open-deletion-guard`: description, subject), the exact annotation patch, and the
 * executor's judgement of the namespace as it is now against the one approved.
 */
import { describe, expect, it } from "vitest";
import { approveDeleteCommand, preflightEvidence } from "../../../commands/approve-delete.js";
import { defaultRegistry } from "../../../commands/index.js";
import type { CommandContext } from "../../../commands/types.js";
import { judgeNamespace } from "../../../src/actions/deletion-guard.js";
import { type OpenDeletionGuardAction } from "../../../src/requests/model.js";
import { actionSubject, describeAction } from "../../../src/requests/action-kinds.js";
import { ErrorCode, UnstuckError } from "../../../src/errors.js";
import { buildAnnotationPatch, jsonPointerToken } from "../../../src/kube/annotation-patch.js";
import type { KubePort } from "../../../src/kube/port.js";
import type { NamespaceSnapshot } from "../../../src/kube/types.js";
import { silentLogger } from "../../../src/log.js";

const registry = defaultRegistry();

function refusal(text: string): UnstuckError {
  try {
    registry.parse(text);
  } catch (err) {
    if (err instanceof UnstuckError) return err;
    throw err;
  }
  throw new Error(`"${text}" parsed`);
}

/** A kube port any call to which fails the test: parsing and refusals must not reach the cluster. */
const untouchable = new Proxy({} as KubePort, {
  get: (_t, name) => () => {
    throw new Error(`kube.${String(name)} was called`);
  },
});

const action: OpenDeletionGuardAction = {
  type: "open-deletion-guard",
  namespace: "myapp",
  precondition: { uid: "uid-1", resourceVersion: "42" },
  windowSeconds: 3600,
  preflight: { verdict: "risky", summary: "two Argo CD Applications manage it" },
};

function snapshot(extra: Partial<NamespaceSnapshot> = {}): NamespaceSnapshot {
  return {
    name: "myapp",
    uid: "uid-1",
    resourceVersion: "42",
    phase: "Active",
    specFinalizers: ["kubernetes"],
    finalizers: [],
    conditions: [],
    labels: {},
    annotations: {},
    ...extra,
  };
}

describe("approve-delete ns: grammar", () => {
  it("parses a namespace and a reason (the alias too), and its help example", () => {
    const parsed = registry.parse('approve-delete ns myapp --reason "duplicate of the platform app"');
    expect(parsed.command).toBe(approveDeleteCommand);
    expect(parsed.input).toEqual({ namespace: "myapp", reason: "duplicate of the platform app" });
    expect(registry.parse('approve-delete namespace myapp --reason "  duplicate of it  "').input).toEqual({
      namespace: "myapp",
      reason: "duplicate of it",
    });
    for (const example of approveDeleteCommand.syntax.examples)
      expect(() => registry.parse(example)).not.toThrow();
    const entry = registry.help().entries.find((e) => e.usage.startsWith("approve-delete ns"));
    expect(entry?.usage).toBe("approve-delete ns <namespace> --reason <text>");
  });

  it("refuses bad input with a specific message", () => {
    const cases: [string, ErrorCode, RegExp][] = [
      [
        "approve-delete ns myapp",
        ErrorCode.BadInput,
        /^Missing --reason <text> \(Why this namespace goes now/,
      ],
      [
        'approve-delete ns --reason "duplicate of the platform app"',
        ErrorCode.BadInput,
        /^Missing <namespace>\./,
      ],
      [
        'approve-delete ns myapp --reason "short"',
        ErrorCode.BadInput,
        /^Say why in at least 10 characters: --reason "<why myapp goes now, who owns it>"\.$/,
      ],
      [
        'approve-delete ns My_App --reason "duplicate of the platform app"',
        ErrorCode.InvalidName,
        /^"My_App" is not a valid namespace name/,
      ],
      [
        'approve-delete ns myapp other --reason "duplicate of the platform app"',
        ErrorCode.BadInput,
        /^Unexpected argument "other"\./,
      ],
      [
        'approve-delete ns myapp --reason "duplicate of it" --force',
        ErrorCode.BadInput,
        /^Unknown option --force for `approve-delete ns`/,
      ],
      ["approve-delete ns myapp --reason", ErrorCode.BadInput, /^Option --reason needs a value/],
    ];
    for (const [text, code, message] of cases) {
      const err = refusal(text);
      expect(err.code, text).toBe(code);
      expect(err.message, text).toMatch(message);
    }
  });

  it("changes nothing on bad input or from a terminal: no cluster call, no request", async () => {
    const ctx = (surface: "slack" | "cli"): CommandContext => ({
      actor: { userId: "UALICE", teamId: "T1", channelId: "COPS", surface },
      services: { kube: untouchable, now: () => new Date(), log: silentLogger() },
    });
    const bad = await registry.dispatch('approve-delete ns myapp --reason "short"', ctx("slack"));
    expect(bad).toMatchObject({ type: "error", error: { code: ErrorCode.BadInput } });
    const cli = await registry.dispatch(
      'approve-delete ns myapp --reason "duplicate of the platform app"',
      ctx("cli"),
    );
    expect(cli).toMatchObject({ type: "error", error: { code: ErrorCode.Forbidden } });
    if (cli.type !== "error") throw new Error("expected an error");
    expect(cli.error.message).toMatch(/requested and approved in Slack.*preflight delete ns myapp/);
    // In Slack without the approval engine (no Redis): said so, before any read.
    const noEngine = await registry.dispatch(
      'approve-delete ns myapp --reason "duplicate of the platform app"',
      ctx("slack"),
    );
    expect(noEngine).toMatchObject({ type: "error", error: { code: ErrorCode.Config } });
  });
});

describe("the open-deletion-guard action", () => {
  it("is described and keyed by its namespace: one pending request per namespace", () => {
    expect(describeAction(action)).toBe("deletion guard of namespace myapp");
    expect(actionSubject(action)).toBe("deletion-guard/myapp");
    expect(actionSubject({ ...action, precondition: { uid: "uid-2", resourceVersion: "7" } })).toBe(
      actionSubject(action),
    );
    expect(actionSubject({ ...action, namespace: "other" })).not.toBe(actionSubject(action));
  });

  it("carries the preflight to approvers: verdict first, reasons, what breaks, what could not be checked", () => {
    expect(
      preflightEvidence({
        namespace: "myapp",
        verdict: "risky",
        reasons: ["two Argo CD Applications manage it"],
        finalizerObjects: [],
        awsDeleted: [{ type: "LoadBalancer", id: "arn:x", name: "k8s-myapp" }],
        hostnames: [{ hostname: "test.example.com", effect: "test.example.com will answer 502" }],
        warnings: ["AWS: not configured"],
      }),
    ).toEqual([
      "preflight: RISKY",
      "two Argo CD Applications manage it",
      "test.example.com will answer 502",
      "deleted with it: LoadBalancer k8s-myapp",
      "not checked: AWS: not configured",
    ]);
  });
});

describe("the annotation patch", () => {
  const KEY = "unstuck.dev/deletion-approved";
  const pins = [
    { op: "test", path: "/metadata/uid", value: "uid-1" },
    { op: "test", path: "/metadata/resourceVersion", value: "42" },
  ];
  it("pins uid and resourceVersion, escapes the key (RFC 6901), and adds the map when there is none", () => {
    expect(jsonPointerToken("a~b/c")).toBe("a~0b~1c");
    const seen = { uid: "uid-1", resourceVersion: "42" };
    expect(buildAnnotationPatch({ ...seen, annotations: {} }, KEY, "req")).toEqual([
      ...pins,
      { op: "add", path: "/metadata/annotations", value: { [KEY]: "req" } },
    ]);
    expect(buildAnnotationPatch({ ...seen, annotations: { team: "x" } }, KEY, "req")).toEqual([
      ...pins,
      { op: "add", path: "/metadata/annotations/unstuck.dev~1deletion-approved", value: "req" },
    ]);
    expect(buildAnnotationPatch({ ...seen, annotations: { [KEY]: "req" } }, KEY, null)).toEqual([
      ...pins,
      { op: "remove", path: "/metadata/annotations/unstuck.dev~1deletion-approved" },
    ]);
    // Nothing to remove: only the pins.
    expect(buildAnnotationPatch({ ...seen, annotations: { team: "x" } }, KEY, null)).toEqual(pins);
  });
});

describe("judging the namespace against the approved one", () => {
  it("applies only to the same, unchanged, live namespace", () => {
    expect(judgeNamespace(action, snapshot())).toBeUndefined();
    expect(judgeNamespace(action, null)).toBe("Not applied: namespace myapp no longer exists.");
    expect(judgeNamespace(action, snapshot({ uid: "uid-2" }))).toBe(
      "Not applied: namespace myapp is a different namespace now (re-created: uid uid-2, approved uid-1).",
    );
    expect(judgeNamespace(action, snapshot({ deletionTimestamp: "2026-01-01T00:00:00Z" }))).toBe(
      "Not applied: namespace myapp is already being deleted (since 2026-01-01T00:00:00Z).",
    );
    expect(judgeNamespace(action, snapshot({ resourceVersion: "43" }))).toMatch(
      /^Not applied: namespace myapp changed since approval \(resourceVersion 42 → 43\)/,
    );
  });
});
