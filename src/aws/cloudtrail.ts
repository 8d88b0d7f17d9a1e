/** `CloudTrailPort` over the CloudTrail SDK client: `LookupEvents`, 50 a page, at most `max`. */
import { LookupEventsCommand, type CloudTrailClient } from "@aws-sdk/client-cloudtrail";
import type { CloudTrailPort } from "./port.js";
import { aws } from "./sdk-calls.js";
import type { CloudTrailEventSnapshot } from "./types.js";

export function createCloudTrailAdapter(cloudtrail: CloudTrailClient): CloudTrailPort {
  return {
    async cloudTrailEvents(query) {
      const out: CloudTrailEventSnapshot[] = [];
      let token: string | undefined;
      do {
        const res = await aws("cloudtrail:LookupEvents", () =>
          cloudtrail.send(
            new LookupEventsCommand({
              LookupAttributes:
                query.resourceName !== undefined
                  ? [{ AttributeKey: "ResourceName", AttributeValue: query.resourceName }]
                  : [{ AttributeKey: "EventName", AttributeValue: query.eventName ?? "" }],
              StartTime: query.start,
              EndTime: query.end,
              MaxResults: Math.min(50, query.max - out.length),
              NextToken: token,
            }),
          ),
        );
        for (const e of res.Events ?? []) {
          let detail: Record<string, unknown> = {};
          try {
            detail = JSON.parse(e.CloudTrailEvent ?? "{}") as Record<string, unknown>;
          } catch {
            // keep the summary fields only
          }
          const identity = (detail.userIdentity ?? {}) as Record<string, unknown>;
          const caller = typeof identity.arn === "string" ? identity.arn : e.Username;
          out.push({
            id: e.EventId ?? "",
            time: (e.EventTime ?? new Date(0)).toISOString(),
            name: e.EventName ?? query.eventName ?? "",
            source: e.EventSource ?? "",
            ...(typeof detail.errorCode === "string" ? { errorCode: detail.errorCode } : {}),
            ...(typeof detail.errorMessage === "string" ? { errorMessage: detail.errorMessage } : {}),
            ...(caller ? { caller } : {}),
            requestParameters: (detail.requestParameters ?? {}) as Record<string, unknown>,
          });
        }
        token = res.NextToken;
      } while (token && out.length < query.max);
      return out;
    },
  };
}
