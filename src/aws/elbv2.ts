/**
 * `LoadBalancingPort` over the ELBv2 SDK client. Calls are chosen to be the fewest that answer the
 * question (names rather than listing an account; 20 names or ARNs a call, pages of 400), because
 * ELB's Describe* bucket is 40 requests with a refill of 10/s.
 */
import {
  DeleteLoadBalancerCommand,
  DeleteTargetGroupCommand,
  DescribeListenersCommand,
  DescribeLoadBalancersCommand,
  DescribeRulesCommand,
  DescribeTagsCommand,
  DescribeTargetGroupsCommand,
  DescribeTargetHealthCommand,
  type LoadBalancer,
  type ElasticLoadBalancingV2Client,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import { chunks, mapLimit } from "../util/concurrency.js";
import { UnstuckError } from "../errors.js";
import type { LoadBalancingPort, TaggingPort } from "./port.js";
import { aws, deletion, tagMap } from "./sdk-calls.js";
import type { ListenerRuleSnapshot, LoadBalancerSnapshot, RegisteredTargetSnapshot, Tags } from "./types.js";

/** A load balancer as the pure core reads it (tags are added by the caller, from DescribeTags). */
function toLoadBalancerSnapshot(lb: LoadBalancer): LoadBalancerSnapshot {
  return {
    arn: lb.LoadBalancerArn ?? "",
    name: lb.LoadBalancerName ?? "",
    dnsName: lb.DNSName ?? "",
    ...(lb.CanonicalHostedZoneId ? { canonicalHostedZoneId: lb.CanonicalHostedZoneId } : {}),
    state: lb.State?.Code ?? "unknown",
    type: lb.Type ?? "application",
    ...(lb.Scheme ? { scheme: lb.Scheme } : {}),
    ...(lb.VpcId ? { vpcId: lb.VpcId } : {}),
    securityGroups: lb.SecurityGroups ?? [],
    ...(lb.CreatedTime ? { createdTime: lb.CreatedTime.toISOString() } : {}),
    tags: {},
  };
}

/** The tag the Load Balancer Controller puts on everything it creates for a cluster. */
const CLUSTER_TAG = "elbv2.k8s.aws/cluster";

/**
 * @param tagging Reads the tags of a cluster's load balancers and target groups (`clusterTags`),
 *   100 a page instead of DescribeTags' 20.
 */
export function createLoadBalancingAdapter(
  elbv2: ElasticLoadBalancingV2Client,
  tagging: TaggingPort,
): LoadBalancingPort {
  async function elbTags(arns: readonly string[]): Promise<Map<string, Tags>> {
    const out = new Map<string, Tags>();
    for (const batch of chunks(arns, 20)) {
      const res = await aws("elasticloadbalancing:DescribeTags", () =>
        elbv2.send(new DescribeTagsCommand({ ResourceArns: batch })),
      );
      for (const d of res.TagDescriptions ?? []) if (d.ResourceArn) out.set(d.ResourceArn, tagMap(d.Tags));
    }
    return out;
  }

  /** Tags of the resources of one type tagged for a cluster, by ARN (Tagging API, 100 a page). */
  async function taggedFor(cluster: string, type: string): Promise<Map<string, Tags>> {
    const found = await tagging.resourcesByTags({ [CLUSTER_TAG]: cluster }, [type]);
    return new Map(found.map((r) => [r.arn, r.tags]));
  }

  const port: LoadBalancingPort = {
    async allLoadBalancers(options) {
      const listing = (async () => {
        const found: LoadBalancerSnapshot[] = [];
        let marker: string | undefined;
        do {
          const res = await aws("elasticloadbalancing:DescribeLoadBalancers", () =>
            elbv2.send(new DescribeLoadBalancersCommand({ PageSize: 400, Marker: marker })),
          );
          for (const lb of res.LoadBalancers ?? []) found.push(toLoadBalancerSnapshot(lb));
          marker = res.NextMarker;
        } while (marker);
        return found;
      })();
      const cluster = options?.clusterTags;
      const [found, clusterTags] = await Promise.all([
        listing,
        cluster !== undefined ? taggedFor(cluster, "elasticloadbalancing:loadbalancer") : undefined,
      ]);
      if (options?.withoutTags === true && clusterTags === undefined) return found;
      const tags = clusterTags ?? (await elbTags(found.map((lb) => lb.arn)));
      return found.map((lb) => ({ ...lb, tags: tags.get(lb.arn) ?? {} }));
    },

    async deleteLoadBalancer(arn) {
      await deletion("elasticloadbalancing:DeleteLoadBalancer", () =>
        elbv2.send(new DeleteLoadBalancerCommand({ LoadBalancerArn: arn })),
      );
    },

    async deleteTargetGroup(arn) {
      await deletion("elasticloadbalancing:DeleteTargetGroup", () =>
        elbv2.send(new DeleteTargetGroupCommand({ TargetGroupArn: arn })),
      );
    },

    async loadBalancersByName(names) {
      if (names.length === 0) return [];
      const found: LoadBalancerSnapshot[] = [];
      // One request for all names; a single unknown name fails the whole call, so fall back to
      // asking one by one only then.
      const describe = async (batch: readonly string[]): Promise<void> => {
        try {
          const res = await aws("elasticloadbalancing:DescribeLoadBalancers", () =>
            elbv2.send(new DescribeLoadBalancersCommand({ Names: [...batch] })),
          );
          for (const lb of res.LoadBalancers ?? []) found.push(toLoadBalancerSnapshot(lb));
        } catch (err) {
          if (
            err instanceof UnstuckError &&
            (err.details.awsError === "LoadBalancerNotFoundException" ||
              err.details.awsError === "LoadBalancerNotFound")
          ) {
            if (batch.length > 1) for (const n of batch) await describe([n]);
            return;
          }
          throw err;
        }
      };
      // ELB takes at most 20 names a call.
      await Promise.all(chunks([...new Set(names)], 20).map((batch) => describe(batch)));
      const tags = await elbTags(found.map((lb) => lb.arn));
      return found.map((lb) => ({ ...lb, tags: tags.get(lb.arn) ?? {} }));
    },

    async targetGroupsOf(loadBalancerArn) {
      const res = await aws("elasticloadbalancing:DescribeTargetGroups", () =>
        elbv2.send(new DescribeTargetGroupsCommand({ LoadBalancerArn: loadBalancerArn })),
      );
      const groups = res.TargetGroups ?? [];
      const tags = await elbTags(groups.map((g) => g.TargetGroupArn ?? ""));
      return groups.map((g) => ({
        arn: g.TargetGroupArn ?? "",
        name: g.TargetGroupName ?? "",
        loadBalancerArns: g.LoadBalancerArns ?? [],
        tags: tags.get(g.TargetGroupArn ?? "") ?? {},
      }));
    },

    async listenersOf(loadBalancerArn) {
      const res = await aws("elasticloadbalancing:DescribeListeners", () =>
        elbv2.send(new DescribeListenersCommand({ LoadBalancerArn: loadBalancerArn })),
      );
      return (res.Listeners ?? []).map((l) => ({
        arn: l.ListenerArn ?? "",
        loadBalancerArn: l.LoadBalancerArn ?? loadBalancerArn,
        ...(l.Port !== undefined ? { port: l.Port } : {}),
        ...(l.Protocol ? { protocol: l.Protocol } : {}),
      }));
    },

    async listenerRulesOf(loadBalancerArn) {
      const listeners = await port.listenersOf(loadBalancerArn);
      const perListener = await Promise.all(
        listeners.map(async (l) => {
          const out: ListenerRuleSnapshot[] = [];
          let marker: string | undefined;
          do {
            const res = await aws("elasticloadbalancing:DescribeRules", () =>
              elbv2.send(new DescribeRulesCommand({ ListenerArn: l.arn, Marker: marker })),
            );
            for (const r of res.Rules ?? []) {
              const hosts = (r.Conditions ?? [])
                .filter((c) => c.Field === "host-header")
                .flatMap((c) => c.HostHeaderConfig?.Values ?? c.Values ?? []);
              out.push({
                listenerArn: l.arn,
                isDefault: r.IsDefault === true,
                hosts,
                forwards: (r.Actions ?? []).some((a) => a.Type === "forward"),
              });
            }
            marker = res.NextMarker;
          } while (marker);
          return out;
        }),
      );
      return perListener.flat();
    },

    async registeredTargets(targetGroupArn) {
      try {
        const res = await aws("elasticloadbalancing:DescribeTargetHealth", () =>
          elbv2.send(new DescribeTargetHealthCommand({ TargetGroupArn: targetGroupArn })),
        );
        return (res.TargetHealthDescriptions ?? []).map((t): RegisteredTargetSnapshot => ({
          id: t.Target?.Id ?? "",
          ...(t.Target?.Port !== undefined ? { port: t.Target.Port } : {}),
          ...(t.Target?.AvailabilityZone ? { availabilityZone: t.Target.AvailabilityZone } : {}),
          state: t.TargetHealth?.State ?? "unknown",
          ...(t.TargetHealth?.Reason ? { reason: t.TargetHealth.Reason } : {}),
        }));
      } catch (err) {
        // The target group itself is gone: no target can be registered in it.
        if (
          err instanceof UnstuckError &&
          (err.details.awsError === "TargetGroupNotFound" ||
            err.details.awsError === "TargetGroupNotFoundException")
        )
          return undefined;
        throw err;
      }
    },

    async targetGroupsByArn(arns) {
      const batches = await Promise.all(
        chunks([...new Set(arns)], 20).map(async (batch) => {
          try {
            const res = await aws("elasticloadbalancing:DescribeTargetGroups", () =>
              elbv2.send(new DescribeTargetGroupsCommand({ TargetGroupArns: batch })),
            );
            return res.TargetGroups ?? [];
          } catch (err) {
            // One unknown ARN fails the whole call: ask one by one only then.
            const notFound =
              err instanceof UnstuckError &&
              (err.details.awsError === "TargetGroupNotFound" ||
                err.details.awsError === "TargetGroupNotFoundException");
            if (notFound && batch.length > 1) {
              const one = await Promise.all(batch.map((a) => port.targetGroupsByArn([a])));
              return one.flat().map((t) => ({
                TargetGroupArn: t.arn,
                TargetGroupName: t.name,
                LoadBalancerArns: [...t.loadBalancerArns],
              }));
            }
            if (notFound) return [];
            throw err;
          }
        }),
      );
      return batches.flat().map((g) => ({
        arn: g.TargetGroupArn ?? "",
        name: g.TargetGroupName ?? "",
        loadBalancerArns: g.LoadBalancerArns ?? [],
        tags: {},
      }));
    },

    async allTargetGroups(options) {
      const listing = (async () => {
        const groups: { arn: string; name: string; loadBalancerArns: string[] }[] = [];
        let marker: string | undefined;
        do {
          const res = await aws("elasticloadbalancing:DescribeTargetGroups", () =>
            elbv2.send(new DescribeTargetGroupsCommand({ PageSize: 400, Marker: marker })),
          );
          for (const g of res.TargetGroups ?? []) {
            groups.push({
              arn: g.TargetGroupArn ?? "",
              name: g.TargetGroupName ?? "",
              loadBalancerArns: g.LoadBalancerArns ?? [],
            });
          }
          marker = res.NextMarker;
        } while (marker);
        return groups;
      })();
      if (options?.withoutTags === true) return (await listing).map((g) => ({ ...g, tags: {} }));
      const cluster = options?.clusterTags;
      const [groups, clusterTags] = await Promise.all([
        listing,
        cluster !== undefined ? taggedFor(cluster, "elasticloadbalancing:targetgroup") : undefined,
      ]);
      const tags = clusterTags ?? (await elbTags(groups.map((g) => g.arn)));
      return groups.map((g) => ({ ...g, tags: tags.get(g.arn) ?? {} }));
    },

    async elbTagsOf(arns) {
      // A few batches at once: well inside ELB's burst of 40; the SDK backs off if throttled.
      const out = new Map<string, Tags>();
      const results = await mapLimit(chunks([...new Set(arns)], 20), 8, (batch) => elbTags(batch));
      for (const r of results) {
        if (!r.ok) throw r.error;
        for (const [arn, tags] of r.value) out.set(arn, tags);
      }
      return out;
    },
  };
  return port;
}
