/**
 * Elastic Load Balancing v2 over the `query` protocol (API 2015-12-01): form POST in,
 * `<{Op}Response><{Op}Result>` out, lists as `<member>`.
 */
import { AwsApiError } from "../errors.js";
import type { AwsWorld, LoadBalancer, TargetGroup } from "../world.js";
import { escapeXml, writeXml, type XmlValue } from "../xml.js";
import {
  decodeToken,
  encodeToken,
  formInt,
  formList,
  formStructs,
  type ServiceRequest,
  type ServiceResult,
  type TrailInfo,
} from "./common.js";

const NS = "http://elasticloadbalancing.amazonaws.com/doc/2015-12-01/";

/** The query-protocol error envelope. */
export function elbErrorBody(err: AwsApiError, requestId: string): string {
  return `<ErrorResponse xmlns="${NS}"><Error><Type>${err.type}</Type><Code>${escapeXml(err.code)}</Code><Message>${escapeXml(err.message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`;
}

function respond(action: string, result: Record<string, XmlValue>, requestId: string): ServiceResult {
  const inner = Object.entries(result)
    .map(([k, v]) => writeXml(k, v, () => "member"))
    .join("");
  return {
    body: `<${action}Response xmlns="${NS}"><${action}Result>${inner}</${action}Result><ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></${action}Response>`,
  };
}

function page<T>(items: T[], form: Map<string, string>, max = 400): { items: T[]; nextMarker?: string } {
  const pageSize = formInt(form, "PageSize") ?? max;
  if (pageSize < 1 || pageSize > max) {
    throw new AwsApiError(
      "ValidationError",
      `1 validation error detected: Value '${pageSize}' at 'pageSize' failed to satisfy constraint: Member must have value ${pageSize < 1 ? "greater than or equal to 1" : `less than or equal to ${max}`}`,
    );
  }
  const start = decodeToken(
    form.get("Marker"),
    "elb",
    "ValidationError",
    "Invalid value for parameter Marker",
  );
  const slice = items.slice(start, start + pageSize);
  return start + pageSize < items.length
    ? { items: slice, nextMarker: encodeToken(start + pageSize, "elb") }
    : { items: slice };
}

function lbXml(lb: LoadBalancer): XmlValue {
  return {
    LoadBalancerArn: lb.arn,
    DNSName: lb.dnsName,
    CanonicalHostedZoneId: lb.canonicalHostedZoneId,
    CreatedTime: lb.createdTime,
    LoadBalancerName: lb.name,
    Scheme: lb.scheme,
    VpcId: lb.vpcId,
    State: { Code: lb.state },
    Type: lb.type,
    AvailabilityZones: lb.availabilityZones.map((az) => ({
      ZoneName: az.zoneName,
      SubnetId: az.subnetId,
      LoadBalancerAddresses: [],
    })),
    SecurityGroups: lb.securityGroups,
    IpAddressType: lb.ipAddressType,
  };
}

function tgXml(world: AwsWorld, tg: TargetGroup): XmlValue {
  return {
    TargetGroupArn: tg.arn,
    TargetGroupName: tg.name,
    Protocol: tg.protocol,
    Port: tg.port,
    VpcId: tg.vpcId,
    HealthCheckProtocol: tg.protocol,
    HealthCheckPort: "traffic-port",
    HealthCheckEnabled: true,
    HealthCheckIntervalSeconds: 15,
    HealthCheckTimeoutSeconds: 5,
    HealthyThresholdCount: 2,
    UnhealthyThresholdCount: 2,
    HealthCheckPath: tg.healthCheckPath,
    Matcher: { HttpCode: "200" },
    LoadBalancerArns: world.loadBalancersOfTargetGroup(tg.arn),
    TargetType: tg.targetType,
    ProtocolVersion: "HTTP1",
    IpAddressType: "ipv4",
  };
}

/** What CloudTrail records for the mutating ELBv2 calls. */
export function elbTrail(req: ServiceRequest): TrailInfo {
  const f = req.form;
  const lbArn = f.get("LoadBalancerArn");
  const tgArn = f.get("TargetGroupArn");
  if (req.action === "DeleteLoadBalancer" || req.action === "CreateListener") {
    return {
      requestParameters: { loadBalancerArn: lbArn ?? null },
      resources:
        lbArn !== undefined
          ? [{ ResourceType: "AWS::ElasticLoadBalancingV2::LoadBalancer", ResourceName: lbArn }]
          : [],
    };
  }
  if (req.action === "DeleteTargetGroup") {
    return {
      requestParameters: { targetGroupArn: tgArn ?? null },
      resources:
        tgArn !== undefined
          ? [{ ResourceType: "AWS::ElasticLoadBalancingV2::TargetGroup", ResourceName: tgArn }]
          : [],
    };
  }
  const params: Record<string, unknown> = {};
  for (const [k, v] of f)
    if (k !== "Action" && k !== "Version") params[k.charAt(0).toLowerCase() + k.slice(1)] = v;
  return { requestParameters: params, resources: [] };
}

/** Runs one ELBv2 action against the world. */
export function handleElbv2(world: AwsWorld, req: ServiceRequest): ServiceResult {
  const f = req.form;
  const id = req.requestId;
  switch (req.action) {
    case "DescribeLoadBalancers": {
      const arns = formList(f, "LoadBalancerArns.member");
      const names = formList(f, "Names.member");
      if (arns.length > 0 && names.length > 0) {
        throw new AwsApiError(
          "ValidationError",
          "Load balancer names and load balancer ARNs cannot be specified at the same time",
        );
      }
      let lbs = [...world.loadBalancers.values()];
      if (arns.length > 0) {
        if (arns.some((a) => !world.loadBalancers.has(a)))
          throw new AwsApiError("LoadBalancerNotFound", "One or more load balancers not found");
        lbs = arns.map((a) => world.requireLoadBalancer(a));
      } else if (names.length > 0) {
        const missing = names.filter((n) => !lbs.some((lb) => lb.name === n));
        if (missing.length > 0)
          throw new AwsApiError("LoadBalancerNotFound", `Load balancers '[${missing.join(", ")}]' not found`);
        lbs = lbs.filter((lb) => names.includes(lb.name));
      }
      const p = page(lbs, f);
      return respond(req.action, { LoadBalancers: p.items.map(lbXml), NextMarker: p.nextMarker }, id);
    }
    case "DescribeTags": {
      const arns = formList(f, "ResourceArns.member");
      if (arns.length > 20) {
        throw new AwsApiError(
          "ValidationError",
          `1 validation error detected: Value '[${arns.join(", ")}]' at 'resourceArns' failed to satisfy constraint: Member must have length less than or equal to 20`,
        );
      }
      for (const a of arns) {
        if (!world.tags.has(a)) {
          if (a.includes(":targetgroup/"))
            throw new AwsApiError("TargetGroupNotFound", `Target groups '${a}' not found`);
          throw new AwsApiError("LoadBalancerNotFound", `Load balancers '${a}' not found`);
        }
      }
      return respond(
        req.action,
        {
          TagDescriptions: arns.map((a) => ({
            ResourceArn: a,
            Tags: Object.entries(world.tags.get(a) ?? {}).map(([Key, Value]) => ({ Key, Value })),
          })),
        },
        id,
      );
    }
    case "DescribeTargetGroups": {
      const lbArn = f.get("LoadBalancerArn");
      const arns = formList(f, "TargetGroupArns.member");
      const names = formList(f, "Names.member");
      let tgs = [...world.targetGroups.values()];
      if (lbArn !== undefined) {
        world.requireLoadBalancer(lbArn);
        tgs = tgs.filter((tg) => world.loadBalancersOfTargetGroup(tg.arn).includes(lbArn));
      }
      if (arns.length > 0) {
        if (arns.some((a) => !world.targetGroups.has(a)))
          throw new AwsApiError("TargetGroupNotFound", "One or more target groups not found");
        tgs = tgs.filter((tg) => arns.includes(tg.arn));
      }
      if (names.length > 0) {
        const missing = names.filter((n) => !tgs.some((tg) => tg.name === n));
        if (missing.length > 0)
          throw new AwsApiError("TargetGroupNotFound", `Target groups '[${missing.join(", ")}]' not found`);
        tgs = tgs.filter((tg) => names.includes(tg.name));
      }
      const p = page(tgs, f);
      return respond(
        req.action,
        { TargetGroups: p.items.map((tg) => tgXml(world, tg)), NextMarker: p.nextMarker },
        id,
      );
    }
    case "DescribeTargetHealth": {
      const tg = world.requireTargetGroup(f.get("TargetGroupArn") ?? "");
      return respond(
        req.action,
        {
          TargetHealthDescriptions: tg.targets.map((t) => ({
            Target: { Id: t.id, Port: t.port },
            HealthCheckPort: String(t.port),
            TargetHealth:
              t.health === "healthy"
                ? { State: t.health }
                : t.health === "unused"
                  ? {
                      State: t.health,
                      Reason: "Target.NotInUse",
                      Description: "Target group is not configured to receive traffic from the load balancer",
                    }
                  : {
                      State: t.health,
                      Reason: "Target.FailedHealthChecks",
                      Description: "Health checks failed",
                    },
          })),
        },
        id,
      );
    }
    case "DescribeListeners": {
      const lbArn = f.get("LoadBalancerArn");
      const arns = formList(f, "ListenerArns.member");
      if (lbArn === undefined && arns.length === 0) {
        throw new AwsApiError(
          "ValidationError",
          "You must specify either listener ARNs or a load balancer ARN",
        );
      }
      let ls = [...world.listeners.values()];
      if (lbArn !== undefined) {
        world.requireLoadBalancer(lbArn);
        ls = ls.filter((l) => l.loadBalancerArn === lbArn);
      }
      if (arns.length > 0) {
        if (arns.some((a) => !world.listeners.has(a)))
          throw new AwsApiError("ListenerNotFound", "One or more listeners not found");
        ls = ls.filter((l) => arns.includes(l.arn));
      }
      const p = page(ls, f);
      return respond(
        req.action,
        {
          Listeners: p.items.map((l) => ({
            ListenerArn: l.arn,
            LoadBalancerArn: l.loadBalancerArn,
            Port: l.port,
            Protocol: l.protocol,
            DefaultActions:
              l.defaultTargetGroupArn !== undefined
                ? [
                    {
                      Type: "forward",
                      TargetGroupArn: l.defaultTargetGroupArn,
                      ForwardConfig: {
                        TargetGroups: [{ TargetGroupArn: l.defaultTargetGroupArn, Weight: 1 }],
                      },
                    },
                  ]
                : [
                    {
                      Type: "fixed-response",
                      FixedResponseConfig: { StatusCode: "404", ContentType: "text/plain" },
                    },
                  ],
          })),
          NextMarker: p.nextMarker,
        },
        id,
      );
    }
    case "DescribeRules": {
      const listener = world.listeners.get(f.get("ListenerArn") ?? "");
      if (!listener) throw new AwsApiError("ListenerNotFound", "One or more listeners not found");
      // Every rule in priority order, then the listener's default rule (IsDefault, priority
      // "default", no conditions), as ELB lists them. Conditions carry both the legacy `Values` and
      // the typed config (`HostHeaderConfig`, `PathPatternConfig`), as ELB answers for rules made
      // with the typed form (the Load Balancer Controller's).
      const defaultActions =
        listener.defaultTargetGroupArn !== undefined
          ? [{ Type: "forward", TargetGroupArn: listener.defaultTargetGroupArn, Order: 1 }]
          : [
              {
                Type: "fixed-response",
                Order: 1,
                FixedResponseConfig: { StatusCode: "404", ContentType: "text/plain" },
              },
            ];
      return respond(
        req.action,
        {
          Rules: [
            ...listener.rules.map((r) => ({
              RuleArn: r.arn,
              Priority: r.priority,
              Conditions: [
                ...(r.hostHeaders !== undefined && r.hostHeaders.length > 0
                  ? [
                      {
                        Field: "host-header",
                        Values: r.hostHeaders,
                        HostHeaderConfig: { Values: r.hostHeaders },
                      },
                    ]
                  : []),
                {
                  Field: "path-pattern",
                  Values: r.pathPatterns,
                  PathPatternConfig: { Values: r.pathPatterns },
                },
              ],
              Actions: r.targetGroupArns.map((t) => ({ Type: "forward", TargetGroupArn: t, Order: 1 })),
              IsDefault: false,
            })),
            {
              RuleArn: `${listener.arn.replace(":listener/", ":listener-rule/")}/default`,
              Priority: "default",
              Conditions: [],
              Actions: defaultActions,
              IsDefault: true,
            },
          ],
        },
        id,
      );
    }
    case "DeleteLoadBalancer": {
      const arn = f.get("LoadBalancerArn");
      if (arn === undefined)
        throw new AwsApiError(
          "ValidationError",
          "1 validation error detected: Value null at 'loadBalancerArn' failed to satisfy constraint: Member must not be null",
        );
      world.deleteLoadBalancer(arn);
      return respond(req.action, {}, id);
    }
    case "DeleteTargetGroup": {
      world.deleteTargetGroup(f.get("TargetGroupArn") ?? "");
      return respond(req.action, {}, id);
    }
    case "CreateLoadBalancer": {
      const tags = Object.fromEntries(
        formStructs(f, "Tags.member").map((t) => [t.get("Key") ?? "", t.get("Value") ?? ""]),
      );
      const subnets = formList(f, "Subnets.member");
      const lb = world.createLoadBalancer({
        name: f.get("Name") ?? "",
        scheme: f.get("Scheme") === "internal" ? "internal" : "internet-facing",
        type: f.get("Type") === "network" ? "network" : "application",
        securityGroups: formList(f, "SecurityGroups.member"),
        tags,
        ...(subnets.length > 0
          ? {
              subnets: subnets.map((s, i) => ({
                subnetId: s,
                zoneName: `${world.region}${"abcd"[i % 4] ?? "a"}`,
              })),
            }
          : {}),
      });
      world.createLoadBalancerEnis(lb.arn);
      return respond(req.action, { LoadBalancers: [lbXml(lb)] }, id);
    }
    case "CreateTargetGroup": {
      const tags = Object.fromEntries(
        formStructs(f, "Tags.member").map((t) => [t.get("Key") ?? "", t.get("Value") ?? ""]),
      );
      const tt = f.get("TargetType");
      const tg = world.createTargetGroup({
        name: f.get("Name") ?? "",
        protocol: f.get("Protocol") ?? "HTTP",
        port: formInt(f, "Port") ?? 80,
        ...(f.get("VpcId") !== undefined ? { vpcId: f.get("VpcId") } : {}),
        ...(tt === "instance" || tt === "ip" || tt === "lambda" || tt === "alb" ? { targetType: tt } : {}),
        tags,
      });
      return respond(req.action, { TargetGroups: [tgXml(world, tg)] }, id);
    }
    case "RegisterTargets":
    case "DeregisterTargets": {
      const arn = f.get("TargetGroupArn") ?? "";
      const targets = formStructs(f, "Targets.member").map((t) => {
        const port = t.get("Port");
        return { id: t.get("Id") ?? "", ...(port !== undefined ? { port: Number(port) } : {}) };
      });
      if (req.action === "RegisterTargets") world.registerTargets(arn, targets);
      else world.deregisterTargets(arn, targets);
      return respond(req.action, {}, id);
    }
    case "CreateListener": {
      const action = formStructs(f, "DefaultActions.member")[0];
      const tgArn = action?.get("TargetGroupArn");
      const l = world.createListener({
        loadBalancerArn: f.get("LoadBalancerArn") ?? "",
        port: formInt(f, "Port") ?? 80,
        protocol: f.get("Protocol") ?? "HTTP",
        ...(tgArn !== undefined ? { defaultTargetGroupArn: tgArn } : {}),
      });
      return respond(
        req.action,
        {
          Listeners: [
            { ListenerArn: l.arn, LoadBalancerArn: l.loadBalancerArn, Port: l.port, Protocol: l.protocol },
          ],
        },
        id,
      );
    }
    case "AddTags": {
      const tags = Object.fromEntries(
        formStructs(f, "Tags.member").map((t) => [t.get("Key") ?? "", t.get("Value") ?? ""]),
      );
      for (const a of formList(f, "ResourceArns.member")) {
        if (!world.tags.has(a))
          throw new AwsApiError("LoadBalancerNotFound", `Load balancers '${a}' not found`);
        world.addTags(a, tags);
      }
      return respond(req.action, {}, id);
    }
    default:
      throw new AwsApiError("InvalidAction", `The action ${req.action} is not valid for this web service.`);
  }
}
