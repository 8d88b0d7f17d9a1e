/**
 * CloudFront over `rest-xml` (API 2020-05-31). The DistributionConfig is kept as the XML tree the
 * client sent and echoed back verbatim, so any field the bot does not know still round-trips —
 * origin groups (`OriginGroups/Items/OriginGroup`: Id, FailoverCriteria/StatusCodes,
 * Members/Items/OriginGroupMember/OriginId) and cache behaviours (`CacheBehaviors/Items/CacheBehavior`:
 * PathPattern, TargetOriginId) included. UpdateDistribution checks the references as CloudFront
 * does (`validateDistributionConfig` in world.ts): a behaviour targeting no origin or origin group
 * is NoSuchOrigin, an origin group without exactly two members is InvalidArgument.
 */
import { AwsApiError } from "../errors.js";
import type { AwsWorld, Distribution } from "../world.js";
import { child, el, escapeXml, parseXml, writeNode, writeXml, type XmlNode, type XmlValue } from "../xml.js";
import type { ServiceRequest, ServiceResult, TrailInfo } from "./common.js";

const NS = "http://cloudfront.amazonaws.com/doc/2020-05-31/";

/** The rest-xml error envelope. */
export function cloudFrontErrorBody(err: AwsApiError, requestId: string): string {
  return `<?xml version="1.0"?>\n<ErrorResponse xmlns="${NS}"><Error><Type>${err.type}</Type><Code>${escapeXml(err.code)}</Code><Message>${escapeXml(err.message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`;
}

/** Maps method + path to the operation name. */
export function cloudFrontAction(method: string, path: string): string | undefined {
  const p = path.replace(/\/+$/, "");
  if (method === "GET" && p === "/2020-05-31/distribution") return "ListDistributions";
  if (method === "GET" && /^\/2020-05-31\/distribution\/[^/]+$/.test(p)) return "GetDistribution";
  if (method === "GET" && /^\/2020-05-31\/distribution\/[^/]+\/config$/.test(p))
    return "GetDistributionConfig";
  if (method === "PUT" && /^\/2020-05-31\/distribution\/[^/]+\/config$/.test(p)) return "UpdateDistribution";
  return undefined;
}

function doc(node: XmlNode): string {
  const xml = writeNode(node);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<${node.name} xmlns="${NS}"${xml.slice(node.name.length + 1)}`;
}

function distributionNode(world: AwsWorld, d: Distribution): XmlNode {
  return el(
    "Distribution",
    el("Id", d.id),
    el("ARN", d.arn),
    el("Status", world.distributionStatus(d)),
    el("LastModifiedTime", d.lastModifiedTime.toISOString()),
    el("InProgressInvalidationBatches", 0),
    el("DomainName", d.domainName),
    el("ActiveTrustedSigners", el("Enabled", false), el("Quantity", 0)),
    el("ActiveTrustedKeyGroups", el("Enabled", false), el("Quantity", 0)),
    { ...d.config, name: "DistributionConfig" },
  );
}

/** The summary copies the config members ListDistributions shows, with the defaults it requires. */
function summaryNode(world: AwsWorld, d: Distribution): XmlNode {
  const pick = (name: string, fallback: XmlNode): XmlNode => child(d.config, name) ?? fallback;
  return el(
    "DistributionSummary",
    el("Id", d.id),
    el("ARN", d.arn),
    el("ETag", d.etag),
    el("Status", world.distributionStatus(d)),
    el("LastModifiedTime", d.lastModifiedTime.toISOString()),
    el("DomainName", d.domainName),
    pick("Aliases", el("Aliases", el("Quantity", 0))),
    pick("Origins", el("Origins", el("Quantity", 0), el("Items"))),
    pick("OriginGroups", el("OriginGroups", el("Quantity", 0))),
    pick("DefaultCacheBehavior", el("DefaultCacheBehavior")),
    pick("CacheBehaviors", el("CacheBehaviors", el("Quantity", 0))),
    pick("CustomErrorResponses", el("CustomErrorResponses", el("Quantity", 0))),
    pick("Comment", el("Comment", "")),
    pick("PriceClass", el("PriceClass", "PriceClass_All")),
    pick("Enabled", el("Enabled", true)),
    pick("ViewerCertificate", el("ViewerCertificate", el("CloudFrontDefaultCertificate", true))),
    pick(
      "Restrictions",
      el("Restrictions", el("GeoRestriction", el("RestrictionType", "none"), el("Quantity", 0))),
    ),
    pick("WebACLId", el("WebACLId", "")),
    pick("HttpVersion", el("HttpVersion", "http2")),
    pick("IsIPV6Enabled", el("IsIPV6Enabled", true)),
    pick("Staging", el("Staging", false)),
  );
}

function distributionId(path: string): string {
  return decodeURIComponent(path.split("/")[3] ?? "");
}

/** CloudTrail's view of UpdateDistribution. */
export function cloudFrontTrail(req: ServiceRequest): TrailInfo {
  const id = distributionId(req.path);
  return {
    requestParameters: { id, ifMatch: req.headers["if-match"] ?? null },
    resources: [{ ResourceType: "AWS::CloudFront::Distribution", ResourceName: id }],
  };
}

/** Runs one CloudFront operation against the world. */
export function handleCloudFront(world: AwsWorld, req: ServiceRequest): ServiceResult {
  switch (req.action) {
    case "ListDistributions": {
      const all = [...world.distributions.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
      const marker = req.query.get("Marker") ?? "";
      const rawMax = req.query.get("MaxItems");
      const max = rawMax !== null ? Number(rawMax) : 100;
      if (!Number.isInteger(max) || max < 1)
        throw new AwsApiError("InvalidArgument", "MaxItems must be a positive integer.");
      // The marker is the id of the last distribution of the previous page (NextMarker), as on AWS.
      const start = marker === "" ? 0 : all.findIndex((d) => d.id > marker);
      const rest = start < 0 ? [] : all.slice(start);
      const page = rest.slice(0, max);
      const truncated = rest.length > max;
      const list: Record<string, XmlValue> = {
        Marker: marker,
        NextMarker: truncated ? page[page.length - 1]?.id : undefined,
        MaxItems: max,
        IsTruncated: truncated,
        Quantity: page.length,
        Items: page.length > 0 ? page.map((d) => summaryNode(world, d)) : undefined,
      };
      const inner = Object.entries(list)
        .map(([k, v]) => writeXml(k, v, () => "DistributionSummary"))
        .join("");
      return {
        body: `<?xml version="1.0" encoding="UTF-8"?>\n<DistributionList xmlns="${NS}">${inner}</DistributionList>`,
      };
    }
    case "GetDistribution": {
      const d = world.requireDistribution(distributionId(req.path));
      return { headers: { ETag: d.etag }, body: doc(distributionNode(world, d)) };
    }
    case "GetDistributionConfig": {
      const d = world.requireDistribution(distributionId(req.path));
      return { headers: { ETag: d.etag }, body: doc({ ...d.config, name: "DistributionConfig" }) };
    }
    case "UpdateDistribution": {
      const id = distributionId(req.path);
      world.requireDistribution(id);
      let config: XmlNode;
      try {
        config = parseXml(req.body);
      } catch {
        throw new AwsApiError("MalformedInput", "Could not parse the request body as XML");
      }
      if (config.name !== "DistributionConfig")
        throw new AwsApiError("MalformedInput", "Unexpected root element " + config.name);
      const ifMatch = req.headers["if-match"];
      const d = world.updateDistribution(id, typeof ifMatch === "string" ? ifMatch : undefined, {
        ...config,
        attributes: {},
      });
      return { headers: { ETag: d.etag }, body: doc(distributionNode(world, d)) };
    }
    default:
      throw new AwsApiError("InvalidAction", `Unknown operation ${req.method} ${req.path}`, 404);
  }
}
