/**
 * `UNSTUCK_CLUSTERS_FILE` and the AWS variables: the cluster's AWS account and region (with the
 * roles to assume and static keys), and the fleet a file with more than one cluster describes.
 */
import { parse as parseYaml } from "yaml";
import * as z from "zod/mini";
import "./zod-messages.js";
import { ErrorCode, UnstuckError } from "../errors.js";
import type { Env } from "./env.js";

/** An IAM role ARN, as STS AssumeRole takes it. */
const RoleArnSchema = z
  .string()
  .check(
    z.regex(
      /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/,
      "must be an IAM role ARN (arn:aws:iam::<12-digit account>:role/<name>)",
    ),
  );
/** STS `ExternalId`: 2 to 1224 characters of `[\w+=,.@:/-]`. */
const ExternalIdSchema = z
  .string()
  .check(z.regex(/^[\w+=,.@:/-]{2,1224}$/, "must be 2 to 1224 characters of letters, digits and +=,.@:/-"));

const ClustersFileSchema = z.object({
  clusters: z.record(
    z.string(),
    z.object({
      region: z.string().check(z.minLength(1)),
      profile: z.optional(z.string()),
      endpoint: z.optional(z.url()),
      /** Assumed for this cluster's account (with the pod's credentials, the profile or static keys). */
      roleArn: z.optional(RoleArnSchema),
      externalId: z.optional(ExternalIdSchema),
      /** The account holding Route 53 and CloudFront: its role is assumed with the cluster's credentials. */
      edge: z.optional(z.strictObject({ roleArn: RoleArnSchema, externalId: z.optional(ExternalIdSchema) })),
      /** Slack channel ids whose commands go to this cluster (a fleet's routing; see `src/fleet/`). */
      channels: z.optional(
        z.array(z.string().check(z.regex(/^[CG][A-Z0-9]{2,}$/, "must be a Slack channel id (C…)"))),
      ),
      /** The public keys of this cluster's workers (base64url): what they sign verifies only under these. */
      publicKeys: z.optional(z.array(z.string())),
    }),
  ),
});

/** The clusters file, parsed and checked. */
export type ClustersFile = z.infer<typeof ClustersFileSchema>;

export interface AwsTarget {
  readonly region: string;
  readonly profile?: string;
  readonly endpoint?: string;
  /** Role assumed for the cluster's account (clusters file `roleArn`), with its external id. */
  readonly roleArn?: string;
  readonly externalId?: string;
  /** Role of the account holding Route 53 and CloudFront (clusters file `edge`); absent = the cluster's. */
  readonly edge?: { readonly roleArn: string; readonly externalId?: string };
  /** Static keys from the environment; absent = the SDK's chain (profile, IRSA, Pod Identity). */
  readonly credentials?: {
    readonly accessKeyId: string;
    readonly secretAccessKey: string;
    readonly sessionToken?: string;
  };
}

/** One cluster of a fleet: its name (`UNSTUCK_CLUSTER_NAME` of its workers) and the channels mapped to it. */
export interface FleetCluster {
  readonly name: string;
  /** Slack channel ids whose commands go to this cluster when they name none (`--cluster`). */
  readonly channels: readonly string[];
}

/**
 * A fleet: one Slack-facing bot and per-cluster workers on one Redis, present when
 * `UNSTUCK_CLUSTERS_FILE` lists more than one cluster (every release of a fleet mounts the same file).
 */
export interface FleetConfig {
  readonly clusters: readonly FleetCluster[];
}

/** The cluster's AWS settings: from the clusters file when it names the cluster, else the AWS_* variables. */
export function awsTarget(e: Env, file: ClustersFile | undefined): AwsTarget | undefined {
  const target = awsLocation(e, file);
  if (!target) return undefined;
  if (e.AWS_ACCESS_KEY_ID === undefined && e.AWS_SECRET_ACCESS_KEY === undefined) return target;
  if (!e.AWS_ACCESS_KEY_ID || !e.AWS_SECRET_ACCESS_KEY) {
    const variable = e.AWS_ACCESS_KEY_ID ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID";
    throw new UnstuckError(
      ErrorCode.Config,
      `Invalid ${variable}: set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or neither.`,
      {
        variable,
      },
    );
  }
  return {
    ...target,
    credentials: {
      accessKeyId: e.AWS_ACCESS_KEY_ID,
      secretAccessKey: e.AWS_SECRET_ACCESS_KEY,
      ...(e.AWS_SESSION_TOKEN ? { sessionToken: e.AWS_SESSION_TOKEN } : {}),
    },
  };
}

/** Where the cluster's AWS account is (region, profile, endpoint, roles), before any static keys. */
function awsLocation(e: Env, file: ClustersFile | undefined): AwsTarget | undefined {
  if (file !== undefined) {
    const names = Object.keys(file.clusters);
    const name = e.UNSTUCK_CLUSTER_NAME ?? (names.length === 1 ? names[0] : undefined);
    const entry = name !== undefined ? file.clusters[name] : undefined;
    // A fleet's bot holds no cluster's credentials: it routes each command to that cluster's workers.
    if (!entry && name === undefined && e.UNSTUCK_ROLE === "bot") return undefined;
    if (!entry) {
      throw new UnstuckError(
        ErrorCode.Config,
        `Invalid UNSTUCK_CLUSTER_NAME: ${name ?? "(unset)"} is not one of the clusters in UNSTUCK_CLUSTERS_FILE (${names.join(", ")}).`,
        { variable: "UNSTUCK_CLUSTER_NAME" },
      );
    }
    return {
      region: entry.region,
      ...(entry.profile ? { profile: entry.profile } : {}),
      ...((entry.endpoint ?? e.AWS_ENDPOINT_URL) ? { endpoint: entry.endpoint ?? e.AWS_ENDPOINT_URL } : {}),
      ...(entry.roleArn !== undefined ? { roleArn: entry.roleArn } : {}),
      ...(entry.externalId !== undefined ? { externalId: entry.externalId } : {}),
      ...(entry.edge !== undefined
        ? {
            edge: {
              roleArn: entry.edge.roleArn,
              ...(entry.edge.externalId !== undefined ? { externalId: entry.edge.externalId } : {}),
            },
          }
        : {}),
    };
  }
  const region = e.AWS_REGION ?? e.AWS_DEFAULT_REGION;
  if (!region) return undefined;
  return {
    region,
    ...(e.AWS_PROFILE ? { profile: e.AWS_PROFILE } : {}),
    ...(e.AWS_ENDPOINT_URL ? { endpoint: e.AWS_ENDPOINT_URL } : {}),
  };
}

/** `UNSTUCK_CLUSTERS_FILE` read and checked; `undefined` when it is not set. */
export function parseClustersFile(e: Env, readFile: (path: string) => string): ClustersFile | undefined {
  if (!e.UNSTUCK_CLUSTERS_FILE) return undefined;
  let parsed: unknown;
  try {
    parsed = parseYaml(readFile(e.UNSTUCK_CLUSTERS_FILE));
  } catch (err) {
    throw new UnstuckError(
      ErrorCode.Config,
      `Invalid UNSTUCK_CLUSTERS_FILE: cannot read ${e.UNSTUCK_CLUSTERS_FILE} (${err instanceof Error ? err.message : String(err)}).`,
      { variable: "UNSTUCK_CLUSTERS_FILE" },
    );
  }
  const file = ClustersFileSchema.safeParse(parsed);
  if (!file.success) {
    const issue = file.error.issues[0];
    throw new UnstuckError(
      ErrorCode.Config,
      `Invalid UNSTUCK_CLUSTERS_FILE: ${issue?.path.join(".") ?? ""} ${issue?.message ?? "invalid"}.`,
      { variable: "UNSTUCK_CLUSTERS_FILE" },
    );
  }
  return file.data;
}

/**
 * The fleet a clusters file with more than one cluster describes. Its cluster names become queue
 * names (so they follow the `UNSTUCK_CLUSTER_NAME` rule), a channel maps to one cluster at most, and a
 * process that runs workers (`worker`, `all`) names the cluster it serves.
 */
export function fleetOf(e: Env, file: ClustersFile | undefined): FleetConfig | undefined {
  if (file === undefined) return undefined;
  const names = Object.keys(file.clusters);
  if (names.length < 2) return undefined;
  const invalid = (why: string, variable = "UNSTUCK_CLUSTERS_FILE"): UnstuckError =>
    new UnstuckError(ErrorCode.Config, `Invalid ${variable}: ${why}.`, { variable });
  const mapped = new Map<string, string>();
  const clusters: FleetCluster[] = [];
  for (const name of names) {
    if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/.test(name)) {
      throw invalid(
        `cluster name "${name.slice(0, 80)}" must be an EKS cluster name (letters, digits, - and _)`,
      );
    }
    const channels = [...new Set(file.clusters[name]?.channels ?? [])];
    for (const channel of channels) {
      const other = mapped.get(channel);
      if (other !== undefined) {
        throw invalid(
          `channel ${channel} is mapped to both ${other} and ${name}; a channel goes to one cluster`,
        );
      }
      mapped.set(channel, name);
    }
    clusters.push({ name, channels });
  }
  if (e.UNSTUCK_ROLE !== "bot" && e.UNSTUCK_CLUSTER_NAME === undefined) {
    throw invalid(
      `a ${e.UNSTUCK_ROLE === "all" ? "bot-and-worker" : "worker"} process of a fleet serves one cluster: set it to one of ${names.join(", ")}`,
      "UNSTUCK_CLUSTER_NAME",
    );
  }
  return { clusters };
}
