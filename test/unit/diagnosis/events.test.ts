/**
 * A blocker's Events in the diagnosis (one round of requests): the namespace's Events
 * are listed once, beside the type lists, and matched to each blocker by involvedObject kind and
 * name — the newest five, Warnings as errors, for the first 25 blockers — instead of one
 * field-selected list per blocker after the lists. An Events list that fails leaves one warning
 * and the rest of the diagnosis.
 */
import { describe, expect, it } from "vitest";
import { diagnoseNamespace } from "../../../src/diagnosis/diagnose.js";
import type { KubePort } from "../../../src/kube/port.js";
import type {
  EventSnapshot,
  NamespaceSnapshot,
  ObjectSnapshot,
  ResourceType,
} from "../../../src/kube/types.js";

const NS = "ev-stuck";
const BLOCKERS = 30;

const TERMINATING: NamespaceSnapshot = {
  name: NS,
  phase: "Terminating",
  deletionTimestamp: "2025-03-01T09:00:00Z",
  specFinalizers: ["kubernetes"],
  finalizers: [],
  conditions: [],
  labels: {},
  annotations: {},
};

const CONFIGMAPS: ResourceType = {
  group: "",
  version: "v1",
  apiVersion: "v1",
  kind: "ConfigMap",
  resource: "configmaps",
  namespaced: true,
  verbs: ["list", "get", "delete"],
};

const blocker = (i: number): ObjectSnapshot => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  resource: "configmaps",
  namespace: NS,
  name: `cm-${String(i).padStart(2, "0")}`,
  deletionTimestamp: "2025-03-01T09:00:00Z",
  finalizers: ["example.com/hold"],
  labels: {},
  annotations: {},
  ownerReferences: [],
});

const event = (
  about: { kind: string; name: string },
  minute: number,
  type: string,
  tag: string,
): EventSnapshot => ({
  namespace: NS,
  type,
  reason: type === "Warning" ? "FailedCleanup" : "Waiting",
  message: `${tag} at minute ${String(minute)}`,
  count: minute === 9 ? 3 : 1,
  involvedKind: about.kind,
  involvedName: about.name,
  involvedNamespace: NS,
  lastTimestamp: `2025-03-01T10:0${String(minute)}:00Z`,
  source: "hold-controller",
});

// Seven Normal and one Warning about cm-00 (the newest five are kept), one about a Secret of the
// same name, one about cm-29 (beyond the first 25 blockers).
const EVENTS: EventSnapshot[] = [
  ...[1, 2, 3, 4, 5, 6, 7].map((m) =>
    event({ kind: "ConfigMap", name: "cm-00" }, m, "Normal", `cm00-${String(m)}`),
  ),
  event({ kind: "ConfigMap", name: "cm-00" }, 9, "Warning", "cm00-warn"),
  event({ kind: "Secret", name: "cm-00" }, 8, "Warning", "secret-00"),
  event({ kind: "ConfigMap", name: "cm-29" }, 5, "Warning", "cm29"),
];

function kube(events: () => Promise<EventSnapshot[]>): { port: KubePort; eventCalls: unknown[][] } {
  const eventCalls: unknown[][] = [];
  const port: Partial<KubePort> = {
    getNamespace: () => Promise.resolve(TERMINATING),
    discover: () => Promise.resolve({ resources: [CONFIGMAPS], failures: [] }),
    listDeployments: () => Promise.resolve([]),
    listObjects: () => Promise.resolve(Array.from({ length: BLOCKERS }, (_, i) => blocker(i))),
    listEvents: (...args: unknown[]) => {
      eventCalls.push(args);
      return events();
    },
  };
  return {
    port: new Proxy(port as KubePort, {
      get: (t, method) =>
        (t as unknown as Record<string | symbol, unknown>)[method] ??
        (() => Promise.reject(new Error(`unexpected ${String(method)}`))),
    }),
    eventCalls,
  };
}

const now = (): Date => new Date("2025-03-01T11:00:00Z");

describe("diagnosis: blockers' Events from one namespace list", () => {
  it("attaches the newest five Events about each of the first 25 blockers, from one list", async () => {
    const { port, eventCalls } = kube(() => Promise.resolve(EVENTS));
    const d = await diagnoseNamespace(port, NS, { now });
    expect(eventCalls).toEqual([[NS]]);
    const cm00 = d.blockers.find((b) => b.name === "cm-00");
    const events = cm00?.evidence.filter((e) => e.source === "event") ?? [];
    expect(events.map((e) => e.text)).toEqual([
      "cm00-warn at minute 9 (×3)",
      "cm00-7 at minute 7",
      "cm00-6 at minute 6",
      "cm00-5 at minute 5",
      "cm00-4 at minute 4",
    ]);
    expect(events[0]).toMatchObject({
      from: "Event FailedCleanup (hold-controller)",
      time: "2025-03-01T10:09:00Z",
      error: true,
    });
    expect(events.slice(1).every((e) => !e.error)).toBe(true);
    expect(d.blockers.find((b) => b.name === "cm-01")?.evidence).toEqual([]);
    // Beyond the first 25 blockers: nothing attached, and the bound is said.
    expect(d.blockers.find((b) => b.name === "cm-29")?.evidence).toEqual([]);
    expect(d.warnings).toContain(`Events were read for the first 25 of ${String(BLOCKERS)} blockers.`);
    expect(d.warnings.filter((w) => /could not/i.test(w))).toEqual([]);
  });

  it("an Events list that fails is one warning; the blockers are still all there", async () => {
    const { port } = kube(() => Promise.reject(new Error("events are forbidden")));
    const d = await diagnoseNamespace(port, NS, { now });
    expect(d.blockers).toHaveLength(BLOCKERS);
    expect(d.blockers.every((b) => b.evidence.length === 0)).toBe(true);
    const eventWarnings = d.warnings.filter((w) => /could not list events/i.test(w));
    expect(eventWarnings).toHaveLength(1);
    expect(eventWarnings[0]).toMatch(new RegExp(`^Could not list events in ${NS}: `));
  });
});
