/**
 * EC2 over the `ec2` protocol (API 2016-11-15): form POST in, `<{Op}Response>` without a Result
 * wrapper out, lower-camel names, lists as `<item>` under `…Set`, errors in `<Response><Errors>`.
 */
import { AwsApiError } from "../errors.js";
import type {
  AwsWorld,
  NetworkInterface,
  SecurityGroup,
  SecurityGroupRule,
  Tags,
  VpcEndpoint,
} from "../world.js";
import { escapeXml, writeXml, type XmlValue } from "../xml.js";
import {
  decodeToken,
  encodeToken,
  formInt,
  formList,
  formStructs,
  wildcard,
  type ServiceRequest,
  type ServiceResult,
  type TrailInfo,
} from "./common.js";

const NS = "http://ec2.amazonaws.com/doc/2016-11-15/";

/** The ec2-protocol error envelope. */
export function ec2ErrorBody(err: AwsApiError, requestId: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>${escapeXml(err.code)}</Code><Message>${escapeXml(err.message)}</Message></Error></Errors><RequestID>${requestId}</RequestID></Response>`;
}

function respond(action: string, result: Record<string, XmlValue>, requestId: string): ServiceResult {
  const inner = Object.entries(result)
    .map(([k, v]) => writeXml(k, v, () => "item"))
    .join("");
  return {
    body: `<?xml version="1.0" encoding="UTF-8"?>\n<${action}Response xmlns="${NS}"><requestId>${requestId}</requestId>${inner}</${action}Response>`,
  };
}

interface Filter {
  readonly name: string;
  readonly values: string[];
}

function filters(form: Map<string, string>): Filter[] {
  return formStructs(form, "Filter").map((g) => ({
    name: g.get("Name") ?? "",
    values: [...g.entries()]
      .filter(([k]) => /^Value\.\d+$/.test(k))
      .sort((a, b) => Number(a[0].slice(6)) - Number(b[0].slice(6)))
      .map(([, v]) => v),
  }));
}

function tagValues(tags: Tags, name: string): string[] | undefined {
  if (name.startsWith("tag:")) {
    const v = tags[name.slice(4)];
    return v === undefined ? [] : [v];
  }
  if (name === "tag-key") return Object.keys(tags);
  if (name === "tag-value") return Object.values(tags);
  return undefined;
}

/** Every filter must match (AND); within a filter any value may match (OR); values take wildcards. */
function matches(fs: Filter[], valuesOf: (name: string) => string[] | undefined): boolean {
  return fs.every((f) => {
    const vs = valuesOf(f.name);
    if (vs === undefined) throw new AwsApiError("InvalidParameterValue", `The filter '${f.name}' is invalid`);
    return f.values.some((pattern) => vs.some((v) => wildcard(pattern, v)));
  });
}

function pageEc2<T>(items: T[], form: Map<string, string>, kind: string): { items: T[]; nextToken?: string } {
  const max = formInt(form, "MaxResults");
  if (max !== undefined && (max < 5 || max > 1000)) {
    throw new AwsApiError(
      "InvalidParameterValue",
      `Value ( ${max} ) for parameter maxResults is invalid. Parameter must be between 5 and 1000.`,
    );
  }
  const start = decodeToken(
    form.get("NextToken"),
    kind,
    "InvalidPaginationToken",
    `Invalid pagination token`,
  );
  if (max === undefined) return { items: items.slice(start) };
  const slice = items.slice(start, start + max);
  return start + max < items.length
    ? { items: slice, nextToken: encodeToken(start + max, kind) }
    : { items: slice };
}

function tagSet(tags: Tags): XmlValue {
  const entries = Object.entries(tags);
  return entries.length > 0 ? entries.map(([key, value]) => ({ key, value })) : undefined;
}

function permissions(world: AwsWorld, rules: SecurityGroupRule[]): XmlValue {
  const byKey = new Map<string, SecurityGroupRule[]>();
  for (const r of rules) {
    const key = `${r.ipProtocol}/${r.fromPort}/${r.toPort}`;
    byKey.set(key, [...(byKey.get(key) ?? []), r]);
  }
  return [...byKey.values()].map((rs) => {
    const first = rs[0];
    const all = first?.ipProtocol === "-1";
    return {
      ipProtocol: first?.ipProtocol ?? "-1",
      fromPort: all ? undefined : first?.fromPort,
      toPort: all ? undefined : first?.toPort,
      groups: rs
        .filter((r) => r.referencedGroupId !== undefined)
        .map((r) => ({ description: r.description, userId: world.accountId, groupId: r.referencedGroupId })),
      ipRanges: rs
        .filter((r) => r.cidrIpv4 !== undefined)
        .map((r) => ({ cidrIp: r.cidrIpv4, description: r.description })),
      ipv6Ranges: [],
      prefixListIds: [],
    };
  });
}

/** Rules by owning group, built once per request: scanning every rule per group is quadratic in big accounts. */
type RuleIndex = Map<string, { ingress: SecurityGroupRule[]; egress: SecurityGroupRule[] }>;

function indexRules(world: AwsWorld): RuleIndex {
  const index: RuleIndex = new Map();
  for (const r of world.securityGroupRules.values()) {
    let entry = index.get(r.groupId);
    if (entry === undefined) {
      entry = { ingress: [], egress: [] };
      index.set(r.groupId, entry);
    }
    (r.isEgress ? entry.egress : entry.ingress).push(r);
  }
  return index;
}

function rulesOf(world: AwsWorld, groupId: string, egress: boolean, index?: RuleIndex): SecurityGroupRule[] {
  if (index !== undefined) {
    const entry = index.get(groupId);
    return (egress ? entry?.egress : entry?.ingress) ?? [];
  }
  return [...world.securityGroupRules.values()].filter((r) => r.groupId === groupId && r.isEgress === egress);
}

function sgXml(world: AwsWorld, sg: SecurityGroup, index?: RuleIndex): XmlValue {
  return {
    ownerId: sg.ownerId,
    groupId: sg.id,
    groupName: sg.name,
    groupDescription: sg.description,
    ipPermissions: permissions(world, rulesOf(world, sg.id, false, index)),
    ipPermissionsEgress: permissions(world, rulesOf(world, sg.id, true, index)),
    vpcId: sg.vpcId,
    securityGroupArn: `arn:aws:ec2:${world.region}:${world.accountId}:security-group/${sg.id}`,
    tagSet: tagSet(sg.tags),
  };
}

function sgFilterValues(
  world: AwsWorld,
  sg: SecurityGroup,
  name: string,
  index?: RuleIndex,
): string[] | undefined {
  const ingress = rulesOf(world, sg.id, false, index);
  const egress = rulesOf(world, sg.id, true, index);
  const refs = (rs: SecurityGroupRule[]): string[] =>
    rs.flatMap((r) => (r.referencedGroupId !== undefined ? [r.referencedGroupId] : []));
  switch (name) {
    case "group-id":
      return [sg.id];
    case "group-name":
      return [sg.name];
    case "vpc-id":
      return [sg.vpcId];
    case "description":
      return [sg.description];
    case "owner-id":
      return [sg.ownerId];
    case "ip-permission.group-id":
      return refs(ingress);
    case "egress.ip-permission.group-id":
      return refs(egress);
    case "ip-permission.cidr":
      return ingress.flatMap((r) => (r.cidrIpv4 !== undefined ? [r.cidrIpv4] : []));
    case "egress.ip-permission.cidr":
      return egress.flatMap((r) => (r.cidrIpv4 !== undefined ? [r.cidrIpv4] : []));
    case "ip-permission.protocol":
      return ingress.map((r) => r.ipProtocol);
    case "ip-permission.from-port":
      return ingress.map((r) => String(r.fromPort));
    case "ip-permission.to-port":
      return ingress.map((r) => String(r.toPort));
    default:
      return tagValues(sg.tags, name);
  }
}

function ruleXml(world: AwsWorld, r: SecurityGroupRule): XmlValue {
  return {
    securityGroupRuleId: r.id,
    groupId: r.groupId,
    groupOwnerId: world.accountId,
    isEgress: r.isEgress,
    ipProtocol: r.ipProtocol,
    fromPort: r.fromPort,
    toPort: r.toPort,
    cidrIpv4: r.cidrIpv4,
    referencedGroupInfo:
      r.referencedGroupId !== undefined
        ? { groupId: r.referencedGroupId, userId: world.accountId }
        : undefined,
    description: r.description,
    securityGroupRuleArn: `arn:aws:ec2:${world.region}:${world.accountId}:security-group-rule/${r.id}`,
  };
}

function eniXml(eni: NetworkInterface, world: AwsWorld): XmlValue {
  return {
    networkInterfaceId: eni.id,
    subnetId: eni.subnetId,
    vpcId: eni.vpcId,
    availabilityZone: eni.availabilityZone,
    description: eni.description,
    ownerId: eni.ownerId,
    requesterId: eni.requesterId,
    requesterManaged: eni.requesterManaged,
    status: eni.status,
    macAddress: eni.macAddress,
    privateIpAddress: eni.privateIpAddress,
    privateDnsName: `ip-${eni.privateIpAddress.replace(/\./g, "-")}.${world.region}.compute.internal`,
    sourceDestCheck: eni.sourceDestCheck ?? true,
    groupSet: eni.groups.map((g) => ({ groupId: g, groupName: world.securityGroups.get(g)?.name })),
    attachment:
      eni.attachment !== undefined
        ? {
            attachmentId: eni.attachment.id,
            instanceId: eni.attachment.instanceId,
            instanceOwnerId: eni.attachment.instanceOwnerId,
            deviceIndex: eni.attachment.deviceIndex,
            status: eni.attachment.status,
            attachTime: eni.attachment.attachTime,
            deleteOnTermination: eni.attachment.deleteOnTermination ?? false,
            networkCardIndex: eni.attachment.instanceId !== undefined ? 0 : undefined,
          }
        : undefined,
    tagSet: tagSet(eni.tags),
    privateIpAddressesSet: [{ privateIpAddress: eni.privateIpAddress, primary: true }],
    ipv6AddressesSet: [],
    interfaceType: eni.interfaceType,
  };
}

function eniFilterValues(world: AwsWorld, eni: NetworkInterface, name: string): string[] | undefined {
  switch (name) {
    case "group-id":
      return eni.groups;
    case "group-name":
      return eni.groups.map((g) => world.securityGroups.get(g)?.name ?? "");
    case "description":
      return [eni.description];
    case "requester-id":
      return eni.requesterId !== undefined ? [eni.requesterId] : [];
    case "requester-managed":
      return [String(eni.requesterManaged)];
    case "status":
      return [eni.status];
    case "attachment.status":
      return eni.attachment ? [eni.attachment.status] : [];
    case "attachment.instance-id":
      return eni.attachment?.instanceId !== undefined ? [eni.attachment.instanceId] : [];
    case "attachment.instance-owner-id":
      return eni.attachment ? [eni.attachment.instanceOwnerId] : [];
    case "attachment.attachment-id":
      return eni.attachment ? [eni.attachment.id] : [];
    case "attachment.device-index":
      return eni.attachment ? [String(eni.attachment.deviceIndex)] : [];
    case "network-interface-id":
      return [eni.id];
    case "vpc-id":
      return [eni.vpcId];
    case "subnet-id":
      return [eni.subnetId];
    case "availability-zone":
      return [eni.availabilityZone];
    case "interface-type":
      return [eni.interfaceType];
    case "source-dest-check":
      return [String(eni.sourceDestCheck ?? true)];
    case "owner-id":
      return [eni.ownerId];
    case "private-ip-address":
    case "addresses.private-ip-address":
      return [eni.privateIpAddress];
    default:
      return tagValues(eni.tags, name);
  }
}

function vpcEndpointXml(world: AwsWorld, v: VpcEndpoint): XmlValue {
  return {
    vpcEndpointId: v.id,
    vpcEndpointType: v.type,
    vpcId: v.vpcId,
    serviceName: v.serviceName,
    state: v.state,
    routeTableIdSet: [],
    subnetIdSet: v.subnetIds,
    groupSet: v.groups.map((g) => ({ groupId: g, groupName: world.securityGroups.get(g)?.name })),
    ipAddressType: "ipv4",
    dnsOptions: { dnsRecordIpType: "ipv4" },
    privateDnsEnabled: v.privateDnsEnabled,
    requesterManaged: false,
    networkInterfaceIdSet: v.networkInterfaceIds,
    dnsEntrySet: [
      {
        dnsName: `${v.id}-${v.creationTimestamp.getTime().toString(36)}.${v.serviceName.split(".").pop() ?? ""}.${world.region}.vpce.amazonaws.com`,
        hostedZoneId: "Z0VPCENDPOINT0000000",
      },
    ],
    creationTimestamp: v.creationTimestamp,
    tagSet: tagSet(v.tags),
    ownerId: v.ownerId,
  };
}

function vpcEndpointFilterValues(v: VpcEndpoint, name: string): string[] | undefined {
  switch (name) {
    case "vpc-endpoint-id":
      return [v.id];
    case "vpc-id":
      return [v.vpcId];
    case "service-name":
      return [v.serviceName];
    case "vpc-endpoint-state":
      return [v.state];
    case "vpc-endpoint-type":
      return [v.type];
    case "ip-address-type":
      return ["ipv4"];
    default:
      return tagValues(v.tags, name);
  }
}

/** A required scalar parameter, refused the way EC2 refuses a missing one. */
function required(form: Map<string, string>, key: string, wireName: string): string {
  const v = form.get(key);
  if (v === undefined || v === "") {
    throw new AwsApiError("MissingParameter", `The request must contain the parameter ${wireName}`);
  }
  return v;
}

function tagsOf(form: Map<string, string>, resourceType: string): Tags {
  return Object.fromEntries(
    formStructs(form, "TagSpecification")
      .filter((s) => (s.get("ResourceType") ?? resourceType) === resourceType)
      .flatMap((s) => formStructs(s, "Tag"))
      .map((t) => [t.get("Key") ?? "", t.get("Value") ?? ""]),
  );
}

/**
 * Resources a call touched that its request does not name (the ENI a DetachNetworkInterface's
 * attachment id belonged to, the ENI CreateNetworkInterface made). The handler notes them here
 * and {@link ec2Trail}, which the server calls after the handler with the same request, reads them.
 */
const touched = new WeakMap<ServiceRequest, { ResourceType: string; ResourceName: string }[]>();

const PROTOCOLS: Readonly<Record<string, string>> = { "6": "tcp", "17": "udp", "1": "icmp", all: "-1" };

type RuleSpec = Omit<SecurityGroupRule, "id" | "groupId" | "isEgress">;

/** IpPermissions.N (with Groups.M / IpRanges.M) or the legacy flat parameters, one spec per peer. */
function ruleSpecs(world: AwsWorld, form: Map<string, string>): RuleSpec[] {
  const specs: RuleSpec[] = [];
  for (const p of formStructs(form, "IpPermissions")) {
    const rawProto = (p.get("IpProtocol") ?? "-1").toLowerCase();
    const ipProtocol = PROTOCOLS[rawProto] ?? rawProto;
    const all = ipProtocol === "-1";
    const fromPort = all ? -1 : Number(p.get("FromPort") ?? "-1");
    const toPort = all ? -1 : Number(p.get("ToPort") ?? "-1");
    for (const g of formStructs(p, "Groups")) {
      const gid = g.get("GroupId");
      if (gid === undefined)
        throw new AwsApiError(
          "MissingParameter",
          "Either GroupId or GroupName must be specified for a source group",
        );
      const d = g.get("Description");
      specs.push({
        ipProtocol,
        fromPort,
        toPort,
        referencedGroupId: gid,
        ...(d !== undefined ? { description: d } : {}),
      });
    }
    for (const r of formStructs(p, "IpRanges")) {
      const d = r.get("Description");
      specs.push({
        ipProtocol,
        fromPort,
        toPort,
        cidrIpv4: r.get("CidrIp") ?? "",
        ...(d !== undefined ? { description: d } : {}),
      });
    }
  }
  const cidr = form.get("CidrIp");
  const source = form.get("SourceSecurityGroupName");
  if (cidr !== undefined || source !== undefined) {
    const rawProto = (form.get("IpProtocol") ?? "-1").toLowerCase();
    const ipProtocol = PROTOCOLS[rawProto] ?? rawProto;
    const fromPort = formInt(form, "FromPort") ?? -1;
    const toPort = formInt(form, "ToPort") ?? -1;
    if (cidr !== undefined) specs.push({ ipProtocol, fromPort, toPort, cidrIpv4: cidr });
    if (source !== undefined) {
      const g = [...world.securityGroups.values()].find((x) => x.name === source);
      if (!g) throw new AwsApiError("InvalidGroup.NotFound", `The security group '${source}' does not exist`);
      specs.push({ ipProtocol, fromPort, toPort, referencedGroupId: g.id });
    }
  }
  return specs;
}

function groupIdOf(world: AwsWorld, form: Map<string, string>): string {
  const id = form.get("GroupId");
  if (id !== undefined) return id;
  const name = form.get("GroupName");
  if (name === undefined)
    throw new AwsApiError("MissingParameter", "The request must contain the parameter groupName or groupId");
  const g = [...world.securityGroups.values()].find((x) => x.name === name);
  if (!g)
    throw new AwsApiError(
      "InvalidGroup.NotFound",
      `The security group '${name}' does not exist in default VPC 'vpc-0a1b2c3d4e5f60718'`,
    );
  return g.id;
}

/** CloudTrail's view of a mutating EC2 call: lower-camel requestParameters, EC2 resource types. */
export function ec2Trail(req: ServiceRequest): TrailInfo {
  const f = req.form;
  const groupId = f.get("GroupId");
  const sgResource =
    groupId !== undefined ? [{ ResourceType: "AWS::EC2::SecurityGroup", ResourceName: groupId }] : [];
  switch (req.action) {
    case "DeleteSecurityGroup":
      return {
        requestParameters: groupId !== undefined ? { groupId } : { groupName: f.get("GroupName") },
        resources: sgResource,
      };
    case "DeleteNetworkInterface": {
      const eni = f.get("NetworkInterfaceId") ?? "";
      return {
        requestParameters: { networkInterfaceId: eni },
        resources: [{ ResourceType: "AWS::EC2::NetworkInterface", ResourceName: eni }],
      };
    }
    case "ModifyNetworkInterfaceAttribute": {
      const eni = f.get("NetworkInterfaceId") ?? "";
      const groups = formList(f, "SecurityGroupId");
      const description = f.get("Description.Value");
      const check = f.get("SourceDestCheck.Value");
      return {
        requestParameters: {
          networkInterfaceId: eni,
          ...(groups.length > 0 ? { groupSet: { items: groups.map((groupId) => ({ groupId })) } } : {}),
          ...(description !== undefined ? { description: { value: description } } : {}),
          ...(check !== undefined ? { sourceDestCheck: { value: check === "true" } } : {}),
        },
        resources: [
          { ResourceType: "AWS::EC2::NetworkInterface", ResourceName: eni },
          ...groups.map((g) => ({ ResourceType: "AWS::EC2::SecurityGroup", ResourceName: g })),
          ...(touched.get(req) ?? []),
        ],
      };
    }
    case "CreateNetworkInterface": {
      const groups = formList(f, "SecurityGroupId");
      const subnetId = f.get("SubnetId");
      const description = f.get("Description");
      return {
        requestParameters: {
          subnetId,
          ...(description !== undefined ? { description } : {}),
          ...(groups.length > 0 ? { groupSet: { items: groups.map((groupId) => ({ groupId })) } } : {}),
        },
        resources: [
          ...(subnetId !== undefined ? [{ ResourceType: "AWS::EC2::Subnet", ResourceName: subnetId }] : []),
          ...groups.map((g) => ({ ResourceType: "AWS::EC2::SecurityGroup", ResourceName: g })),
          ...(touched.get(req) ?? []),
        ],
      };
    }
    case "AttachNetworkInterface": {
      const eni = f.get("NetworkInterfaceId") ?? "";
      const instanceId = f.get("InstanceId") ?? "";
      return {
        requestParameters: {
          networkInterfaceId: eni,
          instanceId,
          deviceIndex: f.has("DeviceIndex") ? Number(f.get("DeviceIndex")) : undefined,
        },
        resources: [
          { ResourceType: "AWS::EC2::NetworkInterface", ResourceName: eni },
          { ResourceType: "AWS::EC2::Instance", ResourceName: instanceId },
          ...(touched.get(req) ?? []),
        ],
      };
    }
    case "DetachNetworkInterface": {
      const force = f.get("Force");
      return {
        requestParameters: {
          attachmentId: f.get("AttachmentId"),
          ...(force !== undefined ? { force: force === "true" } : {}),
        },
        resources: touched.get(req) ?? [],
      };
    }
    case "ModifyVpcEndpoint": {
      // CloudTrail records the newer VPC APIs with the request's own member names, items as {tag, content}.
      const id = f.get("VpcEndpointId") ?? "";
      const add = formList(f, "AddSecurityGroupId");
      const remove = formList(f, "RemoveSecurityGroupId");
      const items = (xs: string[]): unknown => {
        const list = xs.map((content, i) => ({ tag: i + 1, content }));
        return list.length === 1 ? list[0] : list;
      };
      return {
        requestParameters: {
          ModifyVpcEndpointRequest: {
            VpcEndpointId: id,
            ...(add.length > 0 ? { AddSecurityGroupId: items(add) } : {}),
            ...(remove.length > 0 ? { RemoveSecurityGroupId: items(remove) } : {}),
          },
        },
        resources: [
          { ResourceType: "AWS::EC2::VPCEndpoint", ResourceName: id },
          ...[...add, ...remove].map((g) => ({ ResourceType: "AWS::EC2::SecurityGroup", ResourceName: g })),
          ...(touched.get(req) ?? []),
        ],
      };
    }
    case "AuthorizeSecurityGroupIngress":
    case "RevokeSecurityGroupIngress":
    case "AuthorizeSecurityGroupEgress":
    case "RevokeSecurityGroupEgress": {
      const perms = formStructs(f, "IpPermissions").map((p) => ({
        ipProtocol: p.get("IpProtocol"),
        fromPort: p.has("FromPort") ? Number(p.get("FromPort")) : undefined,
        toPort: p.has("ToPort") ? Number(p.get("ToPort")) : undefined,
        groups: {
          items: formStructs(p, "Groups").map((g) => ({
            groupId: g.get("GroupId"),
            description: g.get("Description"),
          })),
        },
        ipRanges: { items: formStructs(p, "IpRanges").map((r) => ({ cidrIp: r.get("CidrIp") })) },
        ipv6Ranges: {},
        prefixListIds: {},
      }));
      const ruleIds = formList(f, "SecurityGroupRuleId");
      return {
        requestParameters: {
          groupId,
          ...(perms.length > 0 ? { ipPermissions: { items: perms } } : {}),
          ...(ruleIds.length > 0
            ? {
                securityGroupRuleIds: {
                  items: ruleIds.map((securityGroupRuleId) => ({ securityGroupRuleId })),
                },
              }
            : {}),
        },
        resources: sgResource,
      };
    }
    default: {
      const params: Record<string, unknown> = {};
      for (const [k, v] of f)
        if (k !== "Action" && k !== "Version") params[k.charAt(0).toLowerCase() + k.slice(1)] = v;
      return { requestParameters: params, resources: sgResource };
    }
  }
}

/** Runs one EC2 action against the world. */
export function handleEc2(world: AwsWorld, req: ServiceRequest): ServiceResult {
  const f = req.form;
  const id = req.requestId;
  switch (req.action) {
    case "DescribeSecurityGroups": {
      const ids = formList(f, "GroupId");
      const names = formList(f, "GroupName");
      if ((ids.length > 0 || names.length > 0) && f.has("MaxResults")) {
        throw new AwsApiError(
          "InvalidParameterCombination",
          "The parameter groupIds cannot be used with the parameter maxResults",
        );
      }
      for (const g of ids) world.requireGroup(g);
      for (const n of names) {
        if (![...world.securityGroups.values()].some((g) => g.name === n)) {
          throw new AwsApiError(
            "InvalidGroup.NotFound",
            `The security group '${n}' does not exist in default VPC 'vpc-0a1b2c3d4e5f60718'`,
          );
        }
      }
      const fs = filters(f);
      const index = indexRules(world);
      const groups = [...world.securityGroups.values()].filter(
        (g) =>
          (ids.length === 0 || ids.includes(g.id)) &&
          (names.length === 0 || names.includes(g.name)) &&
          matches(fs, (n) => sgFilterValues(world, g, n, index)),
      );
      const p = pageEc2(groups, f, "sg");
      return respond(
        req.action,
        { securityGroupInfo: p.items.map((g) => sgXml(world, g, index)), nextToken: p.nextToken },
        id,
      );
    }
    case "DescribeSecurityGroupRules": {
      const ruleIds = formList(f, "SecurityGroupRuleId");
      const fs = filters(f);
      const rules = [...world.securityGroupRules.values()].filter(
        (r) =>
          (ruleIds.length === 0 || ruleIds.includes(r.id)) &&
          matches(fs, (n) => {
            if (n === "group-id") return [r.groupId];
            if (n === "security-group-rule-id") return [r.id];
            return tagValues({}, n);
          }),
      );
      for (const rid of ruleIds) {
        if (!world.securityGroupRules.has(rid)) {
          throw new AwsApiError(
            "InvalidSecurityGroupRuleId.NotFound",
            `The security group rule ID '${rid}' does not exist`,
          );
        }
      }
      const p = pageEc2(rules, f, "sgr");
      return respond(
        req.action,
        { securityGroupRuleSet: p.items.map((r) => ruleXml(world, r)), nextToken: p.nextToken },
        id,
      );
    }
    case "DescribeNetworkInterfaces": {
      const ids = formList(f, "NetworkInterfaceId");
      for (const e of ids) {
        if (!world.networkInterfaces.has(e)) {
          throw new AwsApiError(
            "InvalidNetworkInterfaceID.NotFound",
            `The networkInterface ID '${e}' does not exist`,
          );
        }
      }
      const fs = filters(f);
      const enis = [...world.networkInterfaces.values()].filter(
        (e) => (ids.length === 0 || ids.includes(e.id)) && matches(fs, (n) => eniFilterValues(world, e, n)),
      );
      const p = pageEc2(enis, f, "eni");
      return respond(
        req.action,
        { networkInterfaceSet: p.items.map((e) => eniXml(e, world)), nextToken: p.nextToken },
        id,
      );
    }
    case "DeleteSecurityGroup": {
      const groupId = groupIdOf(world, f);
      world.deleteSecurityGroup(groupId);
      return respond(req.action, { return: true, groupId }, id);
    }
    case "DeleteNetworkInterface": {
      world.deleteNetworkInterface(required(f, "NetworkInterfaceId", "networkInterfaceId"));
      return respond(req.action, { return: true }, id);
    }
    case "ModifyNetworkInterfaceAttribute": {
      const eniId = required(f, "NetworkInterfaceId", "networkInterfaceId");
      const groups = formList(f, "SecurityGroupId");
      const description = f.get("Description.Value");
      const sourceDestCheck = f.get("SourceDestCheck.Value");
      const deleteOnTermination = f.get("Attachment.DeleteOnTermination");
      // One attribute per call, as EC2 insists; none at all (an empty group list) is refused the same way.
      const given = [
        groups.length > 0 ? "groupSet" : undefined,
        description !== undefined ? "description" : undefined,
        sourceDestCheck !== undefined ? "sourceDestCheck" : undefined,
        deleteOnTermination !== undefined ? "attachment" : undefined,
      ].filter((x) => x !== undefined);
      if (given.length === 0)
        throw new AwsApiError("InvalidParameterCombination", "No attributes specified.");
      if (given.length > 1) {
        throw new AwsApiError(
          "InvalidParameterCombination",
          `Fields for multiple attribute types specified: ${given.join(", ")}`,
        );
      }
      if (groups.length > 0) world.modifyNetworkInterfaceGroups(eniId, groups);
      else if (description !== undefined) world.modifyNetworkInterfaceDescription(eniId, description);
      else if (sourceDestCheck !== undefined) {
        world.modifyNetworkInterfaceSourceDestCheck(eniId, sourceDestCheck === "true");
      } else {
        const eni = world.requireNetworkInterface(eniId);
        if (eni.requesterManaged) {
          throw new AwsApiError(
            "AuthFailure",
            "You do not have permission to access the specified resource.",
          );
        }
        if (deleteOnTermination !== undefined) {
          const attachmentId = f.get("Attachment.AttachmentId");
          if (eni.attachment === undefined || attachmentId !== eni.attachment.id) {
            throw new AwsApiError(
              "InvalidAttachmentID.NotFound",
              `The attachment ID '${attachmentId ?? ""}' does not exist`,
            );
          }
          eni.attachment.deleteOnTermination = deleteOnTermination === "true";
        }
      }
      return respond(req.action, { return: true }, id);
    }
    case "CreateNetworkInterface": {
      const subnetId = required(f, "SubnetId", "subnetId");
      const sibling = [...world.networkInterfaces.values()].find((e) => e.subnetId === subnetId);
      const instance = [...world.instances.values()].find((i) => i.subnetId === subnetId);
      const where = sibling ?? instance;
      if (where === undefined && !/^subnet-[0-9a-f]{8,17}$/.test(subnetId)) {
        throw new AwsApiError("InvalidSubnetID.NotFound", `The subnet ID '${subnetId}' does not exist`);
      }
      const type = f.get("InterfaceType");
      if (type !== undefined && !["efa", "efa-only", "branch", "trunk"].includes(type)) {
        throw new AwsApiError(
          "InvalidParameterValue",
          `Value (${type}) for parameter interfaceType is invalid. Allowed values are (efa, efa-only, branch, trunk)`,
        );
      }
      const groups = formList(f, "SecurityGroupId");
      const description = f.get("Description");
      const ip = f.get("PrivateIpAddress");
      const eni = world.createNetworkInterface({
        subnetId,
        ...(where !== undefined ? { vpcId: where.vpcId, availabilityZone: where.availabilityZone } : {}),
        ...(description !== undefined ? { description } : {}),
        // Without groups AWS gives the interface the VPC's default group, when the world has one.
        groups:
          groups.length > 0
            ? groups
            : [...world.securityGroups.values()]
                .filter((g) => g.name === "default" && g.vpcId === (where?.vpcId ?? "vpc-0a1b2c3d4e5f60718"))
                .map((g) => g.id),
        requesterManaged: false,
        status: "available",
        attached: false,
        ...(type !== undefined ? { interfaceType: type } : {}),
        ...(ip !== undefined ? { privateIpAddress: ip } : {}),
        tags: tagsOf(f, "network-interface"),
      });
      touched.set(req, [{ ResourceType: "AWS::EC2::NetworkInterface", ResourceName: eni.id }]);
      const token = f.get("ClientToken");
      return respond(
        req.action,
        { networkInterface: eniXml(eni, world), ...(token !== undefined ? { clientToken: token } : {}) },
        id,
      );
    }
    case "AttachNetworkInterface": {
      const eniId = required(f, "NetworkInterfaceId", "networkInterfaceId");
      const instanceId = required(f, "InstanceId", "instanceId");
      const deviceIndex = formInt(f, "DeviceIndex");
      if (deviceIndex === undefined) {
        throw new AwsApiError("MissingParameter", "The request must contain the parameter deviceIndex");
      }
      const attachmentId = world.attachNetworkInterface(eniId, instanceId, deviceIndex);
      return respond(req.action, { attachmentId, networkCardIndex: 0 }, id);
    }
    case "DetachNetworkInterface": {
      const attachmentId = required(f, "AttachmentId", "attachmentId");
      const owner = world.networkInterfaceOfAttachment(attachmentId);
      if (owner) touched.set(req, [{ ResourceType: "AWS::EC2::NetworkInterface", ResourceName: owner.id }]);
      world.detachNetworkInterfaceAttachment(attachmentId);
      return respond(req.action, { return: true }, id);
    }
    case "DescribeVpcEndpoints": {
      const ids = formList(f, "VpcEndpointId");
      for (const v of ids) world.requireVpcEndpoint(v);
      const fs = filters(f);
      const endpoints = [...world.vpcEndpoints.values()].filter(
        (v) => (ids.length === 0 || ids.includes(v.id)) && matches(fs, (n) => vpcEndpointFilterValues(v, n)),
      );
      const p = pageEc2(endpoints, f, "vpce");
      return respond(
        req.action,
        { vpcEndpointSet: p.items.map((v) => vpcEndpointXml(world, v)), nextToken: p.nextToken },
        id,
      );
    }
    case "ModifyVpcEndpoint": {
      const vpceId = required(f, "VpcEndpointId", "VpcEndpointId");
      const add = formList(f, "AddSecurityGroupId");
      const remove = formList(f, "RemoveSecurityGroupId");
      const vpce = world.requireVpcEndpoint(vpceId);
      touched.set(
        req,
        vpce.networkInterfaceIds.map((e) => ({
          ResourceType: "AWS::EC2::NetworkInterface",
          ResourceName: e,
        })),
      );
      if (add.length > 0 || remove.length > 0) world.modifyVpcEndpointGroups(vpceId, { add, remove });
      return respond(req.action, { return: true }, id);
    }
    case "AuthorizeSecurityGroupIngress":
    case "AuthorizeSecurityGroupEgress": {
      const groupId = groupIdOf(world, f);
      const added = world.authorize(groupId, req.action.endsWith("Egress"), ruleSpecs(world, f));
      return respond(
        req.action,
        { return: true, securityGroupRuleSet: added.map((r) => ruleXml(world, r)) },
        id,
      );
    }
    case "RevokeSecurityGroupIngress":
    case "RevokeSecurityGroupEgress": {
      const groupId = groupIdOf(world, f);
      const removed = world.revoke(groupId, req.action.endsWith("Egress"), {
        ruleIds: formList(f, "SecurityGroupRuleId"),
        rules: ruleSpecs(world, f),
      });
      return respond(
        req.action,
        {
          return: true,
          revokedSecurityGroupRuleSet: removed.map((r) => ({
            securityGroupRuleId: r.id,
            groupId: r.groupId,
            isEgress: r.isEgress,
          })),
        },
        id,
      );
    }
    case "CreateSecurityGroup": {
      const tags = Object.fromEntries(
        formStructs(f, "TagSpecification")
          .flatMap((s) => formStructs(s, "Tag"))
          .map((t) => [t.get("Key") ?? "", t.get("Value") ?? ""]),
      );
      const sg = world.createSecurityGroup({
        name: f.get("GroupName") ?? "",
        description: f.get("GroupDescription") ?? "",
        ...(f.get("VpcId") !== undefined ? { vpcId: f.get("VpcId") } : {}),
        tags,
      });
      return respond(
        req.action,
        {
          return: true,
          groupId: sg.id,
          securityGroupArn: `arn:aws:ec2:${world.region}:${world.accountId}:security-group/${sg.id}`,
        },
        id,
      );
    }
    case "DescribeVpcs": {
      const vpcIds = new Set<string>([...world.securityGroups.values()].map((g) => g.vpcId));
      return respond(
        req.action,
        {
          vpcSet: [...vpcIds].map((v) => ({
            vpcId: v,
            state: "available",
            cidrBlock: "10.0.0.0/16",
            ownerId: world.accountId,
            isDefault: false,
          })),
        },
        id,
      );
    }
    default:
      throw new AwsApiError("InvalidAction", `The action ${req.action} is not valid for this web service.`);
  }
}
