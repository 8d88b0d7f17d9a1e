/**
 * CloudTrail over JSON 1.1 (`X-Amz-Target: com.amazonaws.cloudtrail.v20131101.CloudTrail_20131101.<Op>`).
 * Only LookupEvents: the account's own management events, newest first, timestamps as epoch seconds.
 */
import { AwsApiError } from "../errors.js";
import type { AwsWorld, TrailEvent } from "../world.js";
import type { ServiceRequest, ServiceResult } from "./common.js";

/** JSON 1.1 errors: `__type` is what both clients map to the error name. */
export function cloudTrailErrorBody(err: AwsApiError): string {
  return JSON.stringify({ __type: err.code, message: err.message });
}

const LOOKUP_KEYS = [
  "EventId",
  "EventName",
  "ReadOnly",
  "Username",
  "ResourceType",
  "ResourceName",
  "EventSource",
  "AccessKeyId",
] as const;

interface LookupInput {
  LookupAttributes?: { AttributeKey?: string; AttributeValue?: string }[];
  StartTime?: number | string;
  EndTime?: number | string;
  MaxResults?: number;
  NextToken?: string;
}

function toDate(v: number | string | undefined): Date | undefined {
  if (v === undefined) return undefined;
  const d = typeof v === "number" ? new Date(v * 1000) : new Date(v);
  if (Number.isNaN(d.getTime())) throw new AwsApiError("InvalidTimeRangeException", "Invalid time value");
  return d;
}

function matchesAttribute(e: TrailEvent, key: string, value: string): boolean {
  switch (key) {
    case "EventId":
      return e.eventId === value;
    case "EventName":
      return e.eventName === value;
    case "ReadOnly":
      return String(e.readOnly) === value;
    case "Username":
      return e.username === value;
    case "ResourceType":
      return e.resources.some((r) => r.ResourceType === value);
    case "ResourceName":
      return e.resources.some((r) => r.ResourceName === value);
    case "EventSource":
      return e.eventSource === value;
    case "AccessKeyId":
      return e.accessKeyId === value;
    default:
      return false;
  }
}

/** Runs one CloudTrail operation against the world. */
export function handleCloudTrail(world: AwsWorld, req: ServiceRequest): ServiceResult {
  if (req.action !== "LookupEvents")
    throw new AwsApiError("UnknownOperationException", `Unknown operation ${req.action}`);
  let input: LookupInput;
  try {
    input = (req.body === "" ? {} : JSON.parse(req.body)) as LookupInput;
  } catch {
    throw new AwsApiError("SerializationException", "Could not parse the request body");
  }
  const attrs = input.LookupAttributes ?? [];
  if (attrs.length > 1)
    throw new AwsApiError("InvalidLookupAttributesException", "You can only specify one lookup attribute.");
  const attr = attrs[0];
  if (attr && !(LOOKUP_KEYS as readonly string[]).includes(attr.AttributeKey ?? "")) {
    throw new AwsApiError(
      "InvalidLookupAttributesException",
      `Lookup attribute key '${attr.AttributeKey ?? ""}' is not valid. Valid keys are: ${LOOKUP_KEYS.join(", ")}.`,
    );
  }
  const max = input.MaxResults ?? 50;
  if (!Number.isInteger(max) || max < 1 || max > 50) {
    throw new AwsApiError(
      "InvalidMaxResultsException",
      `Value ${max} for MaxResults is invalid. Valid values are 1 through 50.`,
    );
  }
  const start = toDate(input.StartTime);
  const end = toDate(input.EndTime);
  if (start && end && start > end)
    throw new AwsApiError("InvalidTimeRangeException", "Start time must be before the end time.");
  const events = world.trail
    .filter(
      (e) =>
        (!start || e.eventTime >= start) &&
        (!end || e.eventTime <= end) &&
        (!attr || matchesAttribute(e, attr.AttributeKey ?? "", attr.AttributeValue ?? "")),
    )
    // Newest first; ties keep recording order reversed, so the later call comes first.
    .map((e, i) => ({ e, i }))
    .sort((a, b) => b.e.eventTime.getTime() - a.e.eventTime.getTime() || b.i - a.i)
    .map(({ e }) => e);
  let from = 0;
  if (input.NextToken !== undefined) {
    // The token names the next event, so pages stay stable while new events arrive.
    const nextId = Buffer.from(input.NextToken, "base64").toString("utf8");
    from = events.findIndex((e) => e.eventId === nextId);
    if (from < 0) throw new AwsApiError("InvalidNextTokenException", "Invalid NextToken.");
  }
  const page = events.slice(from, from + max);
  const next = events[from + max];
  const body = {
    Events: page.map((e) => ({
      EventId: e.eventId,
      EventName: e.eventName,
      ReadOnly: String(e.readOnly),
      AccessKeyId: e.accessKeyId,
      EventTime: e.eventTime.getTime() / 1000,
      EventSource: e.eventSource,
      Username: e.username,
      Resources: e.resources,
      CloudTrailEvent: JSON.stringify(e.detail),
    })),
    ...(next ? { NextToken: Buffer.from(next.eventId).toString("base64") } : {}),
  };
  return { body: JSON.stringify(body) };
}
