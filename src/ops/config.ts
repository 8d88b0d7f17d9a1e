/**
 * Settings of the operations endpoint (`/healthz`, `/readyz`, `/metrics`), read once at start-up
 * beside `loadConfig` and validated the same way: a bad value names the variable.
 */
import { ErrorCode, UnstuckError } from "../errors.js";

export interface OpsConfig {
  /**
   * `UNSTUCK_OPS_PORT`: where the operations endpoint listens (0 = any free port). Unset = no
   * endpoint, so local runs and tests bind nothing extra; the image and the chart set 9090.
   */
  readonly port?: number;
  /** `UNSTUCK_OPS_HOST`: the address it binds (default all interfaces: kubelet probes and scrapes come from outside the pod). */
  readonly host?: string;
}

/** The variables `loadOpsConfig` reads (documented beside `CONFIG_VARIABLES`). */
export const OPS_VARIABLES: readonly string[] = ["UNSTUCK_OPS_PORT", "UNSTUCK_OPS_HOST"];

export function loadOpsConfig(env: Readonly<Record<string, string | undefined>>): OpsConfig {
  const raw = env.UNSTUCK_OPS_PORT?.trim();
  const host = env.UNSTUCK_OPS_HOST?.trim();
  if (raw === undefined || raw === "") return host ? { host } : {};
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port > 65_535) {
    throw new UnstuckError(ErrorCode.Config, "Invalid UNSTUCK_OPS_PORT: must be a port number (0-65535).", {
      variable: "UNSTUCK_OPS_PORT",
    });
  }
  return { port, ...(host ? { host } : {}) };
}
