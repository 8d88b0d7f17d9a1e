/**
 * Route 53 over `rest-xml` (API 2013-04-01): the operation is the method plus the path, list
 * members carry the model's names (`<HostedZone>`, `<ResourceRecordSet>`, `<ResourceRecord>`).
 */
import { AwsApiError } from "../errors.js";
import {
  fqdn,
  recordSortKey,
  type AliasTarget,
  type AwsWorld,
  type HostedZone,
  type ResourceRecordSet,
  type Route53Change,
} from "../world.js";
import { child, childText, escapeXml, parseXml, writeXml, type XmlValue } from "../xml.js";
import type { ServiceRequest, ServiceResult, TrailInfo } from "./common.js";

const NS = "https://route53.amazonaws.com/doc/2013-04-01/";

const LIST_ITEMS: Readonly<Record<string, string>> = {
  HostedZones: "HostedZone",
  ResourceRecordSets: "ResourceRecordSet",
  ResourceRecords: "ResourceRecord",
  Changes: "Change",
  NameServers: "NameServer",
};

/** The rest-xml error envelope. */
export function route53ErrorBody(err: AwsApiError, requestId: string): string {
  return `<?xml version="1.0"?>\n<ErrorResponse xmlns="${NS}"><Error><Type>${err.type}</Type><Code>${escapeXml(err.code)}</Code><Message>${escapeXml(err.message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`;
}

function respond(root: string, result: Record<string, XmlValue>): ServiceResult {
  const inner = Object.entries(result)
    .map(([k, v]) => writeXml(k, v, (key) => LIST_ITEMS[key] ?? "member"))
    .join("");
  return { body: `<?xml version="1.0"?>\n<${root} xmlns="${NS}">${inner}</${root}>` };
}

/** Maps method + path to the operation name, or undefined for an unknown route. */
export function route53Action(method: string, path: string): string | undefined {
  const p = path.replace(/\/+$/, "");
  if (method === "GET" && p === "/2013-04-01/hostedzone") return "ListHostedZones";
  if (method === "GET" && p === "/2013-04-01/hostedzonesbyname") return "ListHostedZonesByName";
  if (method === "GET" && /^\/2013-04-01\/hostedzone\/[^/]+$/.test(p)) return "GetHostedZone";
  if (method === "GET" && /^\/2013-04-01\/hostedzone\/[^/]+\/rrset$/.test(p)) return "ListResourceRecordSets";
  if (method === "POST" && /^\/2013-04-01\/hostedzone\/[^/]+\/rrset$/.test(p))
    return "ChangeResourceRecordSets";
  if (method === "GET" && /^\/2013-04-01\/change\/[^/]+$/.test(p)) return "GetChange";
  return undefined;
}

function segment(path: string, index: number): string {
  return decodeURIComponent(path.split("/")[index] ?? "");
}

/** Route 53 writes `*` in names as the octal escape `\052`. */
function wireName(name: string): string {
  return name.replace(/\*/g, "\\052");
}

function zoneXml(z: HostedZone): XmlValue {
  return {
    Id: `/hostedzone/${z.id}`,
    Name: z.name,
    CallerReference: z.callerReference,
    Config: { Comment: z.comment, PrivateZone: z.privateZone },
    ResourceRecordSetCount: z.records.length,
  };
}

function recordXml(r: ResourceRecordSet): XmlValue {
  return {
    Name: wireName(r.name),
    Type: r.type,
    SetIdentifier: r.setIdentifier,
    Weight: r.weight,
    TTL: r.ttl,
    ResourceRecords: r.values?.map((Value) => ({ Value })),
    AliasTarget: r.aliasTarget
      ? {
          HostedZoneId: r.aliasTarget.hostedZoneId,
          DNSName: r.aliasTarget.dnsName,
          EvaluateTargetHealth: r.aliasTarget.evaluateTargetHealth,
        }
      : undefined,
  };
}

function changeXml(world: AwsWorld, c: Route53Change): XmlValue {
  return {
    Id: `/change/${c.id}`,
    Status: world.changeStatus(c),
    SubmittedAt: c.submittedAt,
    Comment: c.comment,
  };
}

function maxItems(query: URLSearchParams, dflt: number, cap: number): number {
  const raw = query.get("maxitems");
  if (raw === null) return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1)
    throw new AwsApiError(
      "InvalidInput",
      `1 validation error detected: Value '${raw}' at 'maxItems' failed to satisfy constraint: Member must be a positive integer`,
    );
  return Math.min(n, cap);
}

function parseChanges(body: string): {
  comment?: string;
  changes: { action: string; record: ResourceRecordSet }[];
} {
  let root;
  try {
    root = parseXml(body);
  } catch {
    throw new AwsApiError("InvalidInput", "Could not parse the request body as XML");
  }
  const batch = child(root, "ChangeBatch");
  const comment = childText(batch, "Comment");
  const changes = (child(batch, "Changes")?.children ?? []).map((c) => {
    const rr = child(c, "ResourceRecordSet");
    const alias = child(rr, "AliasTarget");
    const values = child(rr, "ResourceRecords")?.children.map((v) => childText(v, "Value") ?? "");
    const ttl = childText(rr, "TTL");
    const weight = childText(rr, "Weight");
    const setIdentifier = childText(rr, "SetIdentifier");
    const aliasTarget: AliasTarget | undefined = alias
      ? {
          hostedZoneId: childText(alias, "HostedZoneId") ?? "",
          dnsName: childText(alias, "DNSName") ?? "",
          evaluateTargetHealth: childText(alias, "EvaluateTargetHealth") === "true",
        }
      : undefined;
    const record: ResourceRecordSet = {
      name: (childText(rr, "Name") ?? "").replace(/\\052/g, "*"),
      type: childText(rr, "Type") ?? "",
      ...(setIdentifier !== undefined ? { setIdentifier } : {}),
      ...(weight !== undefined ? { weight: Number(weight) } : {}),
      ...(ttl !== undefined ? { ttl: Number(ttl) } : {}),
      ...(values !== undefined ? { values } : {}),
      ...(aliasTarget ? { aliasTarget } : {}),
    };
    if (record.aliasTarget && (record.ttl !== undefined || record.values !== undefined)) {
      throw new AwsApiError(
        "InvalidInput",
        "Invalid request: Expected exactly one of [AliasTarget, all of [TTL, and ResourceRecords], or TrafficPolicyInstanceId], but found more than one in Change with [Action=" +
          (childText(c, "Action") ?? "") +
          ", Name=" +
          record.name +
          ", Type=" +
          record.type +
          ", SetIdentifier=null]",
      );
    }
    return { action: childText(c, "Action") ?? "", record };
  });
  return { ...(comment !== undefined ? { comment } : {}), changes };
}

/** CloudTrail's view of ChangeResourceRecordSets. */
export function route53Trail(req: ServiceRequest): TrailInfo {
  const zoneId = segment(req.path, 3);
  let changeBatch: unknown = null;
  try {
    const parsed = parseChanges(req.body);
    changeBatch = {
      changes: parsed.changes.map((c) => ({
        action: c.action,
        resourceRecordSet: {
          name: c.record.name,
          type: c.record.type,
          ...(c.record.ttl !== undefined ? { tTL: c.record.ttl } : {}),
          ...(c.record.values ? { resourceRecords: c.record.values.map((value) => ({ value })) } : {}),
          ...(c.record.aliasTarget ? { aliasTarget: c.record.aliasTarget } : {}),
        },
      })),
      ...(parsed.comment !== undefined ? { comment: parsed.comment } : {}),
    };
  } catch {
    changeBatch = null;
  }
  return {
    requestParameters: { hostedZoneId: zoneId, changeBatch },
    resources: [{ ResourceType: "AWS::Route53::HostedZone", ResourceName: zoneId }],
  };
}

/** Runs one Route 53 operation against the world. */
export function handleRoute53(world: AwsWorld, req: ServiceRequest): ServiceResult {
  const q = req.query;
  switch (req.action) {
    case "ListHostedZones": {
      const zones = [...world.hostedZones.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
      const marker = q.get("marker");
      const max = maxItems(q, 100, 100);
      const start =
        marker !== null ? zones.findIndex((z) => z.id === marker.replace(/^\/hostedzone\//, "")) : 0;
      if (start < 0) throw new AwsApiError("InvalidInput", `Invalid marker: ${marker ?? ""}`);
      const page = zones.slice(start, start + max);
      const next = zones[start + max];
      return respond("ListHostedZonesResponse", {
        HostedZones: page.map(zoneXml),
        Marker: marker ?? undefined,
        IsTruncated: next !== undefined,
        NextMarker: next?.id,
        MaxItems: String(max),
      });
    }
    case "ListHostedZonesByName": {
      const key = (z: { name: string; id: string }): string =>
        `${z.name.slice(0, -1).split(".").reverse().join(".")}\u0000${z.id}`;
      const zones = [...world.hostedZones.values()].sort((a, b) => (key(a) < key(b) ? -1 : 1));
      const dnsName = q.get("dnsname");
      const zoneId = q.get("hostedzoneid");
      if (zoneId !== null && dnsName === null)
        throw new AwsApiError("InvalidInput", "The parameter 'hostedzoneid' requires 'dnsname'");
      const max = maxItems(q, 100, 100);
      const from = dnsName !== null ? key({ name: fqdn(dnsName), id: zoneId ?? "" }) : "";
      const rest = zones.filter((z) => key(z) >= from);
      const page = rest.slice(0, max);
      const next = rest[max];
      return respond("ListHostedZonesByNameResponse", {
        HostedZones: page.map(zoneXml),
        DNSName: dnsName !== null ? fqdn(dnsName) : undefined,
        HostedZoneId: zoneId ?? undefined,
        IsTruncated: next !== undefined,
        NextDNSName: next?.name,
        NextHostedZoneId: next?.id,
        MaxItems: String(max),
      });
    }
    case "GetHostedZone": {
      const z = world.requireZone(segment(req.path, 3));
      return respond("GetHostedZoneResponse", {
        HostedZone: zoneXml(z),
        DelegationSet: z.privateZone
          ? undefined
          : {
              NameServers: (z.records.find((r) => r.type === "NS")?.values ?? []).map((v) =>
                v.replace(/\.$/, ""),
              ),
            },
      });
    }
    case "ListResourceRecordSets": {
      const zoneId = segment(req.path, 3);
      const records = world.sortedRecords(zoneId);
      const name = q.get("name");
      const type = q.get("type");
      const identifier = q.get("identifier");
      if (type !== null && name === null)
        throw new AwsApiError("InvalidInput", "The parameter 'type' requires 'name'");
      if (identifier !== null && type === null)
        throw new AwsApiError("InvalidInput", "The parameter 'identifier' requires 'type'");
      const max = maxItems(q, 300, 300);
      const from =
        name !== null
          ? recordSortKey({
              name: name.replace(/\\052/g, "*"),
              type: type ?? "",
              ...(identifier !== null ? { setIdentifier: identifier } : {}),
            })
          : "";
      const rest = records.filter((r) => recordSortKey(r) >= from);
      const page = rest.slice(0, max);
      const next = rest[max];
      return respond("ListResourceRecordSetsResponse", {
        ResourceRecordSets: page.map(recordXml),
        IsTruncated: next !== undefined,
        NextRecordName: next ? wireName(next.name) : undefined,
        NextRecordType: next?.type,
        NextRecordIdentifier: next?.setIdentifier,
        MaxItems: String(max),
      });
    }
    case "ChangeResourceRecordSets": {
      const zoneId = segment(req.path, 3);
      world.requireZone(zoneId);
      const parsed = parseChanges(req.body);
      const change = world.changeRecords(zoneId, parsed.changes, parsed.comment);
      return respond("ChangeResourceRecordSetsResponse", { ChangeInfo: changeXml(world, change) });
    }
    case "GetChange": {
      const change = world.requireChange(segment(req.path, 3));
      return respond("GetChangeResponse", { ChangeInfo: changeXml(world, change) });
    }
    default:
      throw new AwsApiError("InvalidAction", `Unknown operation ${req.method} ${req.path}`, 404);
  }
}
