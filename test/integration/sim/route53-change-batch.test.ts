/**
 * Route 53's change-batch rules in the simulated world, case by case (the wire and the CLI are
 * covered in cloudfront-route53-waits.test.ts): each change is checked against the zone as the
 * earlier changes of the batch left it, and nothing is saved unless every change passes.
 */
import { describe, expect, it } from "vitest";
import { AwsApiError, AwsWorld, type ResourceRecordSet } from "../../sim/aws/index.js";

function zoneWith(records: ResourceRecordSet[]): { world: AwsWorld; zoneId: string } {
  const world = new AwsWorld();
  const zone = world.createHostedZone({ name: "example.com" });
  world.changeRecords(
    zone.id,
    records.map((record) => ({ action: "CREATE", record })),
  );
  return { world, zoneId: zone.id };
}

function batchError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof AwsApiError) return `${err.code}: ${err.message}`;
    throw err;
  }
  return "accepted";
}

const multi: ResourceRecordSet = {
  name: "multi.example.com",
  type: "A",
  ttl: 60,
  values: ["192.0.2.1", "192.0.2.2"],
};
const weighted: ResourceRecordSet = {
  name: "w.example.com",
  type: "CNAME",
  setIdentifier: "blue",
  weight: 10,
  ttl: 60,
  values: ["blue.example.net"],
};

describe("Route 53 change batches in the simulated world", () => {
  it("matches a DELETE's values as a set, and its TTL and set identifier exactly", () => {
    const { world, zoneId } = zoneWith([multi, weighted]);
    const before = world.sortedRecords(zoneId);
    expect(
      batchError(() => world.changeRecords(zoneId, [{ action: "DELETE", record: { ...multi, ttl: 300 } }])),
    ).toMatch(/^InvalidChangeBatch: .*the values provided do not match the current values/);
    expect(
      batchError(() =>
        world.changeRecords(zoneId, [{ action: "DELETE", record: { ...weighted, setIdentifier: "green" } }]),
      ),
    ).toContain("[name='w.example.com.', type='CNAME', set-identifier='green'] but it was not found");
    expect(world.sortedRecords(zoneId)).toEqual(before);

    world.changeRecords(zoneId, [
      { action: "DELETE", record: { ...multi, values: [...(multi.values ?? [])].reverse() } },
    ]);
    expect(world.sortedRecords(zoneId).some((r) => r.name === "multi.example.com.")).toBe(false);
  });

  it("checks each change against the batch so far: DELETE then CREATE passes, a second DELETE fails the batch", () => {
    const { world, zoneId } = zoneWith([multi]);
    const replaced = { ...multi, values: ["198.51.100.7"] };
    world.changeRecords(zoneId, [
      { action: "DELETE", record: multi },
      { action: "CREATE", record: replaced },
    ]);
    expect(world.sortedRecords(zoneId).find((r) => r.name === "multi.example.com.")?.values).toEqual(
      replaced.values,
    );

    const before = world.sortedRecords(zoneId);
    expect(
      batchError(() =>
        world.changeRecords(zoneId, [
          {
            action: "CREATE",
            record: { name: "new.example.com", type: "A", ttl: 60, values: ["192.0.2.9"] },
          },
          { action: "DELETE", record: replaced },
          { action: "DELETE", record: replaced },
        ]),
      ),
    ).toContain("but it was not found");
    // All-or-nothing: neither the CREATE nor the first DELETE was kept.
    expect(world.sortedRecords(zoneId)).toEqual(before);
  });
});
