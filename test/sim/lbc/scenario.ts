/**
 * The `lbc:` section of a scenario: whether the simulated AWS Load Balancer Controller runs, for
 * which cluster, and which controller Deployments (each with its own IAM identity) reconcile.
 */
import { z } from "zod";

const deploymentSchema = z.union([
  z.string().transform((name) => ({ name, accessKeyId: undefined })),
  z.object({ name: z.string(), accessKeyId: z.string().optional() }),
]);

/** The schema of a scenario's `lbc:` section. */
export const lbcSectionSchema = z.object({
  enabled: z.boolean().default(false),
  cluster: z.string().optional(),
  vpcId: z.string().optional(),
  vpcCidr: z.string().optional(),
  /** `namespace/name` of each controller Deployment; its first Pod (the leader) gets the log lines. */
  deployments: z.array(deploymentSchema).default([]),
  /** ACM certificate ARNs the account has; absent: every ARN exists. */
  certificates: z.array(z.string()).optional(),
  /** The node security group that gets the backend SG's rules (default: the cluster-tagged one). */
  nodeSecurityGroupId: z.string().optional(),
});

/** A validated `lbc:` section. */
export interface LbcSection {
  readonly enabled: boolean;
  readonly cluster?: string;
  readonly vpcId?: string;
  readonly vpcCidr?: string;
  readonly deployments: readonly { readonly name: string; readonly accessKeyId?: string }[];
  readonly certificates?: readonly string[];
  readonly nodeSecurityGroupId?: string;
}

/** Parses the `lbc:` section (absent means disabled). */
export function parseLbcSection(raw: unknown): LbcSection {
  const s = lbcSectionSchema.parse(raw ?? {});
  return {
    enabled: s.enabled,
    ...(s.cluster !== undefined ? { cluster: s.cluster } : {}),
    ...(s.vpcId !== undefined ? { vpcId: s.vpcId } : {}),
    ...(s.vpcCidr !== undefined ? { vpcCidr: s.vpcCidr } : {}),
    ...(s.certificates !== undefined ? { certificates: s.certificates } : {}),
    ...(s.nodeSecurityGroupId !== undefined ? { nodeSecurityGroupId: s.nodeSecurityGroupId } : {}),
    deployments: s.deployments.map((d) => ({
      name: d.name,
      ...(d.accessKeyId !== undefined ? { accessKeyId: d.accessKeyId } : {}),
    })),
  };
}
