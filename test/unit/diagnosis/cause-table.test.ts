import { describe, expect, it } from "vitest";
import { causeKinds, causeTable, presenceKinds } from "../../../src/diagnosis/causes/table.js";

describe("the table of causes", () => {
  it("has exactly one entry for every cause kind", () => {
    const found = [...presenceKinds, ...causeTable.flatMap((rule) => rule.kinds)];
    for (const kind of causeKinds)
      expect(
        found.filter((k) => k === kind),
        kind,
      ).toHaveLength(1);
    expect([...found].sort()).toEqual([...causeKinds].sort());
  });

  it("declares for every on-demand read when it is wanted", () => {
    for (const rule of causeTable)
      for (const need of rule.needs)
        if (typeof need !== "string") {
          expect(["webhooks", "placements"]).toContain(need.read);
          expect(typeof need.when).toBe("function");
        }
  });
});
