/**
 * What a trace of the traffic path answers: the traced paths, what could not be read and why, and
 * what the probes saw. Plain data, built by the collector (src/traffic/trace.ts) and worded by the
 * renderers and the Slack cards.
 */
import type { TracedPath } from "./path.js";

export interface TraceResult {
  /** What was asked: hostnames, or the namespace whose paths were traced. */
  readonly subject: { readonly hostnames: readonly string[] } | { readonly namespace: string };
  readonly paths: readonly TracedPath[];
  /** Reads that failed: the links that needed them are `unknown`. */
  readonly warnings: readonly string[];
  /** What the trace found that is no failure (no cluster connection; a namespace owning nothing). */
  readonly notes: readonly string[];
  /**
   * A namespace trace whose namespace owns no load balancer now (it is gone, or its Ingresses and
   * Services are): its hostnames wait for those owners to come back. `false` for hostnames.
   */
  readonly ownersGone: boolean;
  /**
   * The reads an account refused (a missing permission, or its role could not be assumed), with
   * the account and role named: the trace is partial there. Absent when none was refused.
   */
  readonly denied?: readonly DeniedRead[];
  readonly checkedAt: string;
  /** `--probe`: what DNS and HTTP say for each hostname right now (time-boxed). */
  readonly probes?: readonly HostProbe[];
}

/** A read refused in one account: what, where, and the IAM action or the role that was refused. */
export interface DeniedRead {
  /** What could not be read: `Route 53 hosted zones`, `records named … in zone …`. */
  readonly what: string;
  /** The account's 12-digit id, when known. */
  readonly account?: string;
  /** The role the read was signed as (or could not be assumed). */
  readonly role?: string;
  /** The IAM action refused (`sts:AssumeRole` when the role itself could not be assumed). */
  readonly action?: string;
}

export interface HostProbe {
  readonly hostname: string;
  /** `addresses 1.2.3.4, …` | `NXDOMAIN` | `no answer: …`. */
  readonly dns: string;
  /** One per probed URL: `https://host/readyz → 200` or the error. */
  readonly http: readonly { readonly url: string; readonly result: string; readonly ok: boolean }[];
}
