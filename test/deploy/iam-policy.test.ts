/**
 * Least privilege, derived from the code: every AWS SDK command the product can send (each
 * `new XxxCommand(` in src/ and commands/, its service from the `@aws-sdk/client-*` package it is
 * imported from) is exactly the set of actions deploy/iam-policy.json allows — nothing missing (a
 * call AWS would refuse in production) and nothing extra. Reads and writes are separate
 * statements; writes never on every resource, and on EC2/ELB only on what this cluster's Load
 * Balancer Controller tagged: `elbv2.k8s.aws/cluster` equal to the cluster's name, which the
 * installer fills in for the placeholder `<cluster-name>` — never any controller's tag.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/** The IAM service prefix of each SDK client package the code may use. */
const IAM_PREFIX: Readonly<Record<string, string>> = {
  "@aws-sdk/client-cloudfront": "cloudfront",
  "@aws-sdk/client-cloudtrail": "cloudtrail",
  "@aws-sdk/client-ec2": "ec2",
  "@aws-sdk/client-elastic-load-balancing-v2": "elasticloadbalancing",
  "@aws-sdk/client-resource-groups-tagging-api": "tag",
  "@aws-sdk/client-route-53": "route53",
};

/** Calls AWS authorizes without any policy. */
const NEEDS_NO_PERMISSION = new Set(["sts:GetCallerIdentity"]);

const READ = /^(Describe|List|Get|Lookup|Search)[A-Z]/;

/** What the installer replaces with the EKS cluster's name (README, Deploy step 4). */
const CLUSTER_PLACEHOLDER = "<cluster-name>";
const CLUSTER_TAG = "aws:ResourceTag/elbv2.k8s.aws/cluster";

interface Statement {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: string | string[];
  Condition?: Record<string, Record<string, string | string[]>>;
}

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".d.ts"))
    .map((e) => join(e.parentPath, e.name));
}

/** `service:Action` for each command constructed in `text`, with where it is. */
export function commandsIn(text: string): { action: string; command: string }[] {
  // local name → the command's own name and its package
  const origin = new Map<string, { command: string; pkg: string }>();
  for (const m of text.matchAll(/import\s*\{([^}]*)\}\s*from\s*["'](@aws-sdk\/client-[a-z0-9-]+)["']/g)) {
    for (const spec of (m[1] ?? "").split(",").map((s) => s.trim())) {
      if (spec === "" || spec.startsWith("type ")) continue;
      const [command = "", local = command] = spec.split(/\s+as\s+/);
      if (command.endsWith("Command")) origin.set(local, { command, pkg: m[2] ?? "" });
    }
  }
  const found: { action: string; command: string }[] = [];
  for (const m of text.matchAll(/new\s+([A-Za-z_$][\w$]*)\s*\(/g)) {
    const o = origin.get(m[1] ?? "");
    if (o === undefined) continue; // not an AWS SDK command
    const prefix = IAM_PREFIX[o.pkg];
    if (prefix === undefined)
      throw new Error(`${o.command} comes from ${o.pkg}: add its IAM prefix to IAM_PREFIX`);
    found.push({ action: `${prefix}:${o.command.slice(0, -"Command".length)}`, command: o.command });
  }
  return found;
}

async function actionsInCode(): Promise<Map<string, string[]>> {
  const used = new Map<string, string[]>();
  for (const root of ["src", "commands"]) {
    for (const file of await sourceFiles(root)) {
      for (const { action } of commandsIn(await readFile(file, "utf8"))) {
        if (NEEDS_NO_PERMISSION.has(action)) continue;
        used.set(action, [...(used.get(action) ?? []), file]);
      }
    }
  }
  return used;
}

const list = (v: string | string[]): string[] => (Array.isArray(v) ? v : [v]);

describe("deploy/iam-policy.json", () => {
  it("allows exactly the AWS actions the code sends: nothing missing, nothing extra", async () => {
    const policy = JSON.parse(await readFile("deploy/iam-policy.json", "utf8")) as { Statement: Statement[] };
    const used = await actionsInCode();
    const allowed = new Set(
      policy.Statement.filter((s) => s.Effect === "Allow").flatMap((s) => list(s.Action)),
    );
    const missing = [...used.keys()]
      .filter((a) => !allowed.has(a))
      .map((a) => `${a} (${used.get(a)?.join(", ")})`);
    const extra = [...allowed].filter((a) => !used.has(a));
    expect(missing, "actions the code sends that the policy does not allow").toEqual([]);
    expect(extra, "actions the policy allows that no code sends").toEqual([]);
    // The collection itself works: the diagnosis' core reads are found.
    expect([...used.keys()]).toEqual(
      expect.arrayContaining(["ec2:DescribeSecurityGroups", "elasticloadbalancing:DescribeLoadBalancers"]),
    );
  });

  it("keeps reads and writes in separate statements; writes never on every resource, EC2/ELB writes only on the controller's resources", async () => {
    const policy = JSON.parse(await readFile("deploy/iam-policy.json", "utf8")) as {
      Version: string;
      Statement: Statement[];
    };
    expect(policy.Version).toBe("2012-10-17");
    const sids = policy.Statement.map((s) => s.Sid);
    expect(new Set(sids).size, "unique Sids").toBe(sids.length);
    for (const s of policy.Statement) {
      expect(s.Effect).toBe("Allow");
      const actions = list(s.Action).map((a) => a.split(":")[1] ?? "");
      for (const a of list(s.Action)) expect(a, "no wildcards in actions").not.toContain("*");
      const reads = actions.filter((a) => READ.test(a));
      if (reads.length === actions.length) continue; // a read statement
      expect(reads, `${s.Sid ?? "?"} mixes reads into a write statement`).toEqual([]);
      expect(list(s.Resource), `${s.Sid ?? "?"}: a write statement on every resource`).not.toContain("*");
      if (list(s.Action).some((a) => a.startsWith("ec2:") || a.startsWith("elasticloadbalancing:"))) {
        // Exactly this cluster's tag value: not "the tag exists" (Null), not a pattern (StringLike),
        // not any other operator that another cluster's resources could satisfy.
        expect(
          s.Condition,
          `${s.Sid ?? "?"}: EC2/ELB writes must be conditioned on elbv2.k8s.aws/cluster = this cluster's name`,
        ).toEqual({ StringEquals: { [CLUSTER_TAG]: CLUSTER_PLACEHOLDER } });
      }
    }
  });

  it("leaves the cluster's name to the installer: one placeholder, filled in by the documented command", async () => {
    const text = await readFile("deploy/iam-policy.json", "utf8");
    // The only placeholder: a policy with it unfilled matches no resource (fails closed).
    expect(text.match(/<[^>]*>/g)).toEqual([CLUSTER_PLACEHOLDER]);
    const filled = JSON.parse(text.replaceAll(CLUSTER_PLACEHOLDER, "prod-eks")) as { Statement: Statement[] };
    const conditioned = filled.Statement.filter((st) => st.Condition !== undefined);
    expect(conditioned.map((st) => st.Condition?.StringEquals?.[CLUSTER_TAG])).toEqual(["prod-eks"]);
    // The install steps say to fill it in, and with what.
    const readme = await readFile("README.md", "utf8");
    const step = readme.slice(readme.indexOf("4. **AWS**"), readme.indexOf("5. **Install**"));
    expect(step).toContain(CLUSTER_PLACEHOLDER);
    expect(step).toMatch(/sed .*<cluster-name>/);
  });

  it("finds commands by their package, also when renamed, and ignores type imports and other constructors", () => {
    const text = [
      'import { DescribeTagsCommand, type DescribeTagsCommandOutput } from "@aws-sdk/client-elastic-load-balancing-v2";',
      'import { ChangeResourceRecordSetsCommand as Change } from "@aws-sdk/client-route-53";',
      'import { SomethingCommand } from "./local.js";',
      "await elb.send(new DescribeTagsCommand({}));",
      "await elb.send(new SomethingCommand());",
      "await r53.send(new Change({}));",
    ].join("\n");
    expect(commandsIn(text)).toEqual([
      { action: "elasticloadbalancing:DescribeTags", command: "DescribeTagsCommand" },
      { action: "route53:ChangeResourceRecordSets", command: "ChangeResourceRecordSetsCommand" },
    ]);
    expect(() => commandsIn('import { XCommand } from "@aws-sdk/client-x";\nnew XCommand({});')).toThrow(
      /IAM_PREFIX/,
    );
  });
});
