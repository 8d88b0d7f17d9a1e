/**
 * `CloudFrontPort` over the CloudFront SDK client: distributions as the trace reads them, and the
 * repair's config read-modify-write guarded by the ETag read when the change was planned.
 */
import {
  GetDistributionCommand,
  GetDistributionConfigCommand,
  ListDistributionsCommand,
  UpdateDistributionCommand,
  type CloudFrontClient,
  type DistributionConfig,
  type DistributionSummary,
} from "@aws-sdk/client-cloudfront";
import { ErrorCode, UnstuckError } from "../errors.js";
import type { CloudFrontPort } from "./port.js";
import { aws, needs, staleWrite } from "./sdk-calls.js";
import type { DistributionConfigDocument, DistributionSnapshot } from "./types.js";

/** How long a list of distributions is answered again (see `CloudFrontPort.distributions`). */
const LIST_KEPT_MS = 15_000;

/** One distribution of the list, in the snapshot shape the trace reads. */
function toDistributionSnapshot(d: DistributionSummary): DistributionSnapshot {
  return {
    id: d.Id ?? "",
    domainName: (d.DomainName ?? "").toLowerCase(),
    status: d.Status ?? "unknown",
    enabled: d.Enabled !== false,
    aliases: (d.Aliases?.Items ?? []).map((a) => a.toLowerCase()),
    origins: (d.Origins?.Items ?? []).map((o) => ({
      id: o.Id ?? "",
      domainName: o.DomainName ?? "",
    })),
    originGroups: (d.OriginGroups?.Items ?? []).map((g) => ({
      id: g.Id ?? "",
      members: (g.Members?.Items ?? []).map((m) => m.OriginId ?? ""),
    })),
    defaultTarget: d.DefaultCacheBehavior?.TargetOriginId ?? "",
    behaviors: (d.CacheBehaviors?.Items ?? []).map((b) => ({
      pathPattern: b.PathPattern ?? "",
      target: b.TargetOriginId ?? "",
    })),
  };
}

/** Every distribution of the account, page by page (uncached: the factory keeps the answer). */
async function listDistributions(cf: CloudFrontClient): Promise<DistributionSnapshot[]> {
  const out: DistributionSnapshot[] = [];
  let marker: string | undefined;
  do {
    const res = await aws("cloudfront:ListDistributions", () =>
      cf.send(new ListDistributionsCommand({ Marker: marker })),
    );
    const list = res.DistributionList;
    for (const d of list?.Items ?? []) out.push(toDistributionSnapshot(d));
    marker = list?.IsTruncated ? list.NextMarker : undefined;
  } while (marker);
  return out;
}

/** A distribution's config as read, with the ETag a later update must match. */
async function readDistributionConfig(
  cf: CloudFrontClient,
  id: string,
): Promise<{ etag: string; config: DistributionConfigDocument }> {
  const res = await aws("cloudfront:GetDistributionConfig", () =>
    cf.send(new GetDistributionConfigCommand({ Id: id })),
  );
  if (res.DistributionConfig === undefined || res.ETag === undefined) {
    throw new UnstuckError(ErrorCode.Upstream, `CloudFront returned no config or ETag for ${id}.`);
  }
  // The document is the SDK's object itself, every field as read.
  const config: DistributionConfigDocument = res.DistributionConfig;
  return { etag: res.ETag, config };
}

/** Writes a changed config back, guarded by `ifMatch`; a moved ETag is a stale write. */
async function writeDistributionConfig(
  cf: CloudFrontClient,
  id: string,
  config: DistributionConfigDocument,
  ifMatch: string,
): Promise<{ etag: string; status: string }> {
  try {
    const res = await cf.send(
      new UpdateDistributionCommand({
        Id: id,
        // A config read by `distributionConfig`, changed: whole, so the SDK's shape.
        DistributionConfig: config as DistributionConfig,
        IfMatch: ifMatch,
      }),
    );
    return { etag: res.ETag ?? "", status: res.Distribution?.Status ?? "InProgress" };
  } catch (err) {
    return staleWrite(
      err,
      "cloudfront:UpdateDistribution",
      ["PreconditionFailed", "InvalidIfMatchVersion"],
      `Distribution ${id} changed since the plan was made`,
    );
  }
}

/** Where a distribution's deployment stands, and its current ETag. */
async function readDistributionStatus(
  cf: CloudFrontClient,
  id: string,
): Promise<{ status: string; etag: string }> {
  const res = await aws("cloudfront:GetDistribution", () => cf.send(new GetDistributionCommand({ Id: id })));
  return { status: res.Distribution?.Status ?? "unknown", etag: res.ETag ?? "" };
}

/** @param client Absent → every call fails with a clear error (the traffic path is not configured). */
export function createCloudFrontAdapter(
  client: CloudFrontClient | undefined,
  now: () => number = Date.now,
): CloudFrontPort {
  let listed: { readonly at: number; readonly list: Promise<DistributionSnapshot[]> } | undefined;
  async function listAll(): Promise<DistributionSnapshot[]> {
    return listDistributions(needs(client, "CloudFront"));
  }
  return {
    async distributions(options) {
      if (options?.fresh === true || listed === undefined || now() - listed.at >= LIST_KEPT_MS) {
        const list = listAll();
        const entry = { at: now(), list };
        listed = entry;
        // A failed read is not kept: the next caller reads again.
        list.catch(() => {
          if (listed === entry) listed = undefined;
        });
      }
      return [...(await listed.list)];
    },

    async distributionConfig(id) {
      return readDistributionConfig(needs(client, "CloudFront"), id);
    },

    async updateDistribution(id, config, ifMatch) {
      const cf = needs(client, "CloudFront");
      try {
        return await writeDistributionConfig(cf, id, config, ifMatch);
      } finally {
        // Whatever the answer, the list read before (or during) the write no longer says what is so.
        listed = undefined;
      }
    },

    async distributionStatus(id) {
      return readDistributionStatus(needs(client, "CloudFront"), id);
    },
  };
}
