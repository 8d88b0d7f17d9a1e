import { describe, expect, it } from "vitest";
import type { PathHop, TracedPath } from "../../../src/edge/path.js";
import type { RepointPlan } from "../../../src/edge/repoint.js";
import { renderTraceBlocks } from "../../../src/slack/blocks/trace.js";
import type { TraceResult } from "../../../src/edge/trace-result.js";

const GONE = "k8s-myapp-api-4c0a3e5fa1-906213458.ap-northeast-2.elb.amazonaws.com";
const NO_OWNER =
  "whose it was cannot be established — no owner's status, name derived for a stack, re-created load balancer of that name or ExternalDNS record names one, and a similar name is not evidence; name the target with --to if you know it";

function path(hostname: string, hop: Partial<PathHop> & Pick<PathHop, "verdict">): TracedPath {
  return {
    hostname,
    verdict: hop.verdict,
    hops: [
      {
        kind: "record",
        label: `A ${hostname} (alias) → ${GONE}`,
        why: hop.verdict === "ok" ? "resolves" : `names ${GONE}, a load balancer that does not exist`,
        depth: 0,
        ...hop,
      },
    ],
  };
}

function trace(
  paths: TracedPath[],
  problems: { warnings?: string[]; notes?: string[]; ownersGone?: boolean } = {},
): TraceResult {
  return {
    subject: { namespace: "myapp" },
    paths,
    warnings: problems.warnings ?? [],
    notes: problems.notes ?? [],
    ownersGone: problems.ownersGone ?? false,
    checkedAt: "2026-12-04T07:11:00Z",
  };
}

function text(t: TraceResult, plan?: RepointPlan): string {
  const m = renderTraceBlocks(t, plan);
  return m.blocks
    .flatMap((b) => {
      if (b.type === "section") return [b.text?.text ?? ""];
      if (b.type === "context") return b.elements.map((e) => ("text" in e ? e.text : ""));
      return [];
    })
    .join("\n");
}

describe("the traffic-path card, grouped by what a person does", () => {
  const paths = [
    path("a.example.com", { verdict: "ok" }),
    path("b.example.com", { verdict: "stale", unresolved: NO_OWNER }),
    path("c.example.com", { verdict: "stale", unresolved: NO_OWNER }),
    path("d.example.com", {
      verdict: "stale",
      unresolved: "it was Ingress myapp/d's (…), which has no load balancer now: the owner is not back yet",
      oldOwner: { label: "Ingress myapp/d", namespaces: ["myapp"], evidence: "its status named it" },
    }),
    path("e.example.com", {
      verdict: "stale",
      candidates: [
        "k8s-myapp-e1-0123456789-1.elb.amazonaws.com",
        "k8s-myapp-e2-0123456789-2.elb.amazonaws.com",
      ],
    }),
  ];

  it("one line per hostname, each explanation once, the groups in the order a person acts", () => {
    const t = text(trace(paths));
    for (const host of ["b", "c", "d", "e"]) expect(t.split(`*${host}.example.com*`)).toHaveLength(2);
    // The long explanation is the group's heading, said once for both hostnames it explains.
    expect(t).not.toContain("a similar name is not evidence; name the target");
    expect(t.match(/No owner known/g)).toHaveLength(1);
    expect(t).toMatch(/Waiting for its owner to come back\* \(1\)[^\n]*re-sync the Argo CD Application/);
    expect(t).toContain(
      "• *d.example.com* — A record (alias) → k8s-myapp-api-4c0a3e5fa1 (gone) (was Ingress myapp/d's)",
    );
    const order = ["Several load balancers", "Waiting for its owner", "No owner known", "Intact"].map((h) =>
      t.indexOf(h),
    );
    expect(order).toEqual([...order].sort((x, y) => x - y));
    expect(t).toContain(":large_green_circle: *Intact* (1)\na.example.com");
    // The headline counts; it does not list every hostname again.
    expect(t).toContain("Traffic path of namespace myapp is broken: 4 of 5 hostnames.");
  });

  it("a namespace that owns no load balancer now says what brings them back, not 'partial'", () => {
    const nothingOwned = "No Ingress or Service of type LoadBalancer in namespace myapp.";
    const t = text(trace(paths.slice(1, 3), { notes: [nothingOwned], ownersGone: true }), {
      refused: [],
      questions: [],
      notes: [],
    });
    expect(t).toContain("Waiting for namespace myapp's load balancers to come back* (2)");
    expect(t).toContain("re-sync the Argo CD Application that owns them");
    expect(t).not.toContain("Partial");
    expect(t).not.toContain("No Ingress or Service");
    expect(t).toContain("Nothing can be repointed yet.");
  });

  it("a read that failed makes it partial; any other warning is a note", () => {
    const t = text(
      trace(paths.slice(0, 1), {
        warnings: ["Could not read records of zone example.com: Throttling"],
        notes: ["No cluster connection: x."],
      }),
    );
    expect(t).toContain(":grey_question: Partial — Could not read records of zone example.com: Throttling");
    expect(t).toContain(":information_source: No cluster connection: x.");
  });

  it("user and cluster text is escaped", () => {
    const t = text(trace([path("<!channel>.example.com", { verdict: "stale", unresolved: NO_OWNER })]));
    expect(t).not.toContain("<!channel>");
    expect(t).toContain("&lt;!channel&gt;");
  });
});
