/**
 * The Resource Groups Tagging API over JSON 1.1
 * (`X-Amz-Target: ResourceGroupsTaggingAPI_20170126.<Op>`, signing name `tagging`). Only
 * GetResources, over the world's load balancers, target groups and security groups: what the
 * Load Balancer Controller tags with `elbv2.k8s.aws/cluster` / `ingress.k8s.aws/stack`.
 */
import { AwsApiError } from "../errors.js";
import type { AwsWorld, Tags } from "../world.js";
import { decodeToken, encodeToken, type ServiceRequest, type ServiceResult } from "./common.js";

/** JSON 1.1 errors: `__type` is what both clients map to the error name. */
export function taggingErrorBody(err: AwsApiError): string {
  return JSON.stringify({ __type: err.code, Message: err.message });
}

interface GetResourcesInput {
  PaginationToken?: string;
  TagFilters?: { Key?: string; Values?: string[] }[];
  ResourcesPerPage?: number;
  TagsPerPage?: number;
  ResourceTypeFilters?: string[];
  IncludeComplianceDetails?: boolean;
  ExcludeCompliantResources?: boolean;
  ResourceARNList?: string[];
}

const invalid = (message: string): AwsApiError => new AwsApiError("InvalidParameterException", message);

/** `service[:resourceType]` of an ARN: `elasticloadbalancing:targetgroup`, `ec2:security-group`. */
function resourceTypeOf(arn: string): { service: string; type: string } {
  const parts = arn.split(":");
  const resource = parts.slice(5).join(":");
  return { service: parts[2] ?? "", type: /^[^/:]*/.exec(resource)?.[0] ?? "" };
}

function matchesType(arn: string, filters: readonly string[]): boolean {
  if (filters.length === 0) return true;
  const { service, type } = resourceTypeOf(arn);
  return filters.some((f) => {
    const [fs, ft] = f.split(":", 2);
    return fs === service && (ft === undefined || ft === type);
  });
}

function matchesTags(tags: Tags, filters: readonly { key: string; values: readonly string[] }[]): boolean {
  return filters.every(
    ({ key, values }) =>
      Object.hasOwn(tags, key) && (values.length === 0 || values.includes(tags[key] ?? "")),
  );
}

/** Every tagged resource GetResources can see, in a stable order (load balancers, target groups, groups). */
function taggedResources(world: AwsWorld): { arn: string; tags: Tags }[] {
  const out: { arn: string; tags: Tags }[] = [];
  for (const lb of world.loadBalancers.values())
    out.push({ arn: lb.arn, tags: world.tags.get(lb.arn) ?? {} });
  for (const tg of world.targetGroups.values()) out.push({ arn: tg.arn, tags: world.tags.get(tg.arn) ?? {} });
  for (const sg of world.securityGroups.values()) {
    out.push({
      arn: `arn:aws:ec2:${world.region}:${world.accountId}:security-group/${sg.id}`,
      tags: sg.tags,
    });
  }
  // GetResources does not return resources that were never tagged.
  return out.filter((r) => Object.keys(r.tags).length > 0);
}

function parseInput(body: string): GetResourcesInput {
  try {
    const parsed = (body === "" ? {} : JSON.parse(body)) as unknown;
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
      throw new Error("not an object");
    return parsed;
  } catch {
    throw new AwsApiError("SerializationException", "Could not parse the request body");
  }
}

/** Runs one Resource Groups Tagging API operation against the world. */
export function handleTagging(world: AwsWorld, req: ServiceRequest): ServiceResult {
  if (req.action !== "GetResources")
    throw new AwsApiError("UnknownOperationException", `Unknown operation ${req.action}`);
  const input = parseInput(req.body);
  const tagFilters = input.TagFilters ?? [];
  const typeFilters = input.ResourceTypeFilters ?? [];
  const arnList = input.ResourceARNList;
  if (arnList !== undefined && (tagFilters.length > 0 || typeFilters.length > 0)) {
    throw invalid("ResourceARNList can not be specified along with TagFilters or ResourceTypeFilters.");
  }
  if (tagFilters.length > 50)
    throw invalid(
      `1 validation error detected: Value at 'tagFilters' failed to satisfy constraint: Member must have length less than or equal to 50`,
    );
  const filters = tagFilters.map((f, i) => {
    if (f.Key === undefined || f.Key === "")
      throw invalid(`TagFilter ${i + 1} must have a Key with length greater than or equal to 1.`);
    if ((f.Values ?? []).length > 20)
      throw invalid(
        `1 validation error detected: Value at 'tagFilters.${i + 1}.member.values' failed to satisfy constraint: Member must have length less than or equal to 20`,
      );
    return { key: f.Key, values: f.Values ?? [] };
  });
  if (typeFilters.length > 100) throw invalid("ResourceTypeFilters can have at most 100 items.");
  for (const t of typeFilters) {
    if (!/^[a-z0-9-]+(?::[A-Za-z0-9-]+)?$/.test(t)) throw invalid(`Unsupported resource type filter: ${t}`);
  }
  const perPage = input.ResourcesPerPage ?? 50;
  if (!Number.isInteger(perPage) || perPage < 1 || perPage > 100) {
    throw invalid(
      `ResourcesPerPage value ${String(input.ResourcesPerPage)} is out of range. Valid range is 1 to 100.`,
    );
  }
  const from = decodeToken(
    input.PaginationToken,
    "tagging",
    "InvalidParameterException",
    "The specified PaginationToken is invalid.",
  );

  // Cheapest test first: a page of a 10,000-resource account is asked for dozens of times.
  const matched = taggedResources(world).filter(
    (r) =>
      matchesTags(r.tags, filters) &&
      (arnList === undefined || arnList.includes(r.arn)) &&
      matchesType(r.arn, typeFilters),
  );
  const page = matched.slice(from, from + perPage);
  const more = from + perPage < matched.length;
  return {
    body: JSON.stringify({
      // Real responses always carry the token; an empty string means the last page.
      PaginationToken: more ? encodeToken(from + perPage, "tagging") : "",
      ResourceTagMappingList: page.map((r) => ({
        ResourceARN: r.arn,
        Tags: Object.entries(r.tags).map(([Key, Value]) => ({ Key, Value })),
      })),
    }),
  };
}
