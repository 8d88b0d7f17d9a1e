/** `TaggingPort` over the Resource Groups Tagging API client: `GetResources`, 100 a page. */
import {
  GetResourcesCommand,
  type ResourceGroupsTaggingAPIClient,
} from "@aws-sdk/client-resource-groups-tagging-api";
import type { TaggingPort } from "./port.js";
import { aws, tagMap } from "./sdk-calls.js";
import type { Tags } from "./types.js";

export function createTaggingAdapter(tagging: ResourceGroupsTaggingAPIClient): TaggingPort {
  return {
    async resourcesByTags(tags, types) {
      const out: { arn: string; tags: Tags }[] = [];
      const seen = new Set<string>();
      let token: string | undefined;
      do {
        const res = await aws("tag:GetResources", () =>
          tagging.send(
            new GetResourcesCommand({
              TagFilters: Object.entries(tags).map(([Key, Value]) => ({
                Key,
                Values: typeof Value === "string" ? [Value] : [...Value],
              })),
              ...(types.length > 0 ? { ResourceTypeFilters: [...types] } : {}),
              ResourcesPerPage: 100,
              ...(token ? { PaginationToken: token } : {}),
            }),
          ),
        );
        for (const m of res.ResourceTagMappingList ?? []) {
          if (!m.ResourceARN || seen.has(m.ResourceARN)) continue;
          seen.add(m.ResourceARN);
          out.push({ arn: m.ResourceARN, tags: tagMap(m.Tags) });
        }
        // The last page carries an empty token, not none.
        token = res.PaginationToken;
      } while (token);
      return out;
    },
  };
}
