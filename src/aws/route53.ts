/**
 * `Route53Port` over the Route 53 SDK client: zones and records as the trace reads them, one
 * record name in one short page, and the repair's all-or-nothing change batches.
 */
import {
  ChangeResourceRecordSetsCommand,
  GetChangeCommand,
  ListHostedZonesCommand,
  ListResourceRecordSetsCommand,
  type ResourceRecordSet,
  type ListResourceRecordSetsCommandInput,
  type Route53Client,
} from "@aws-sdk/client-route-53";
import type { RecordChange, Route53Port } from "./port.js";
import { aws, needs, staleWrite } from "./sdk-calls.js";
import type { HostedZoneSnapshot, RecordSetSnapshot } from "./types.js";

/** Route 53 names: lower case, no trailing dot, `\052` (the API's escaped `*`) as `*`. */
export function route53Name(n: string): string {
  return n.replace(/\\052/g, "*").toLowerCase().replace(/\.$/, "");
}

/** A record as the Route 53 API takes it in a change batch. */
export function toResourceRecordSet(r: RecordSetSnapshot): ResourceRecordSet {
  return {
    Name: r.name,
    Type: r.type as ResourceRecordSet["Type"],
    ...(r.alias
      ? {
          AliasTarget: {
            HostedZoneId: r.alias.hostedZoneId,
            DNSName: r.alias.dnsName,
            EvaluateTargetHealth: r.alias.evaluateTargetHealth,
          },
        }
      : { TTL: r.ttl ?? 300, ResourceRecords: r.values.map((Value) => ({ Value })) }),
    ...(r.setIdentifier !== undefined ? { SetIdentifier: r.setIdentifier } : {}),
    ...(r.weight !== undefined ? { Weight: r.weight } : {}),
    ...(r.failover !== undefined ? { Failover: r.failover as ResourceRecordSet["Failover"] } : {}),
    ...(r.region !== undefined ? { Region: r.region as ResourceRecordSet["Region"] } : {}),
  };
}

/** Every hosted zone of the account, page by page, as the trace reads them. */
async function listHostedZones(r53: Route53Client): Promise<HostedZoneSnapshot[]> {
  const out: HostedZoneSnapshot[] = [];
  let marker: string | undefined;
  do {
    const res = await aws("route53:ListHostedZones", () =>
      r53.send(new ListHostedZonesCommand({ Marker: marker })),
    );
    for (const z of res.HostedZones ?? []) {
      out.push({
        id: (z.Id ?? "").replace(/^\/hostedzone\//, ""),
        name: route53Name(z.Name ?? ""),
        private: z.Config?.PrivateZone === true,
        ...(z.ResourceRecordSetCount !== undefined ? { recordCount: z.ResourceRecordSetCount } : {}),
      });
    }
    marker = res.IsTruncated ? res.NextMarker : undefined;
  } while (marker);
  return out;
}

/** One record as the API answered it, in the snapshot shape (`name` already normalised). */
function toRecordSetSnapshot(zoneId: string, name: string, r: ResourceRecordSet): RecordSetSnapshot {
  return {
    zoneId,
    name,
    type: r.Type ?? "",
    ...(r.TTL !== undefined ? { ttl: r.TTL } : {}),
    values: (r.ResourceRecords ?? []).map((v) => v.Value ?? ""),
    ...(r.AliasTarget
      ? {
          alias: {
            hostedZoneId: r.AliasTarget.HostedZoneId ?? "",
            dnsName: r.AliasTarget.DNSName ?? "",
            evaluateTargetHealth: r.AliasTarget.EvaluateTargetHealth === true,
          },
        }
      : {}),
    ...(r.SetIdentifier !== undefined ? { setIdentifier: r.SetIdentifier } : {}),
    ...(r.Weight !== undefined ? { weight: r.Weight } : {}),
    ...(r.Failover !== undefined ? { failover: r.Failover } : {}),
    ...(r.Region !== undefined ? { region: r.Region } : {}),
  };
}

/**
 * The records of a zone — all of them, or (with `name`) those of one name, read from that name
 * in short pages and stopped at the first other name.
 */
async function listRecordSets(
  r53: Route53Client,
  zoneId: string,
  name: string | undefined,
): Promise<RecordSetSnapshot[]> {
  const out: RecordSetSnapshot[] = [];
  let next: Pick<
    ListResourceRecordSetsCommandInput,
    "StartRecordName" | "StartRecordType" | "StartRecordIdentifier"
  > = name !== undefined ? { StartRecordName: name } : {};
  for (;;) {
    const res = await aws("route53:ListResourceRecordSets", () =>
      r53.send(
        new ListResourceRecordSetsCommand({
          HostedZoneId: zoneId,
          ...next,
          ...(name !== undefined ? { MaxItems: 100 } : {}),
        }),
      ),
    );
    let past = false;
    for (const r of res.ResourceRecordSets ?? []) {
      const n = route53Name(r.Name ?? "");
      if (name !== undefined && n !== route53Name(name)) {
        past = true;
        continue;
      }
      out.push(toRecordSetSnapshot(zoneId, n, r));
    }
    // One name: records are sorted by name, so the first other name ends the answer.
    if (past || !res.IsTruncated) break;
    next = {
      StartRecordName: res.NextRecordName,
      StartRecordType: res.NextRecordType,
      StartRecordIdentifier: res.NextRecordIdentifier,
    };
  }
  return out;
}

/** The repair's change batch, all or nothing; a batch that no longer matches is a stale write. */
async function changeRecordSets(
  r53: Route53Client,
  zoneId: string,
  changes: readonly RecordChange[],
  comment: string,
): Promise<{ changeId: string; status: string }> {
  try {
    const res = await r53.send(
      new ChangeResourceRecordSetsCommand({
        HostedZoneId: zoneId,
        ChangeBatch: {
          Comment: comment,
          Changes: changes.map((c) => ({
            Action: c.action,
            ResourceRecordSet: toResourceRecordSet(c.record),
          })),
        },
      }),
    );
    return {
      changeId: (res.ChangeInfo?.Id ?? "").replace(/^\/change\//, ""),
      status: res.ChangeInfo?.Status ?? "PENDING",
    };
  } catch (err) {
    return staleWrite(
      err,
      "route53:ChangeResourceRecordSets",
      ["InvalidChangeBatch"],
      `The records in zone ${zoneId} changed since the plan was made`,
    );
  }
}

/** Where a change batch stands (`PENDING` until every name server has it, then `INSYNC`). */
async function changeStatus(r53: Route53Client, changeId: string): Promise<string> {
  const res = await aws("route53:GetChange", () => r53.send(new GetChangeCommand({ Id: changeId })));
  return res.ChangeInfo?.Status ?? "unknown";
}

/** @param client Absent → every call fails with a clear error (the traffic path is not configured). */
export function createRoute53Adapter(client: Route53Client | undefined): Route53Port {
  return {
    async hostedZones() {
      return listHostedZones(needs(client, "Route 53"));
    },
    async recordSets(zoneId, name) {
      return listRecordSets(needs(client, "Route 53"), zoneId, name);
    },
    async changeRecordSets(zoneId, changes, comment) {
      return changeRecordSets(needs(client, "Route 53"), zoneId, changes, comment);
    },
    async changeStatus(changeId) {
      return changeStatus(needs(client, "Route 53"), changeId);
    },
  };
}
