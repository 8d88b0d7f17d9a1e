/**
 * An outer time bound on every command a surface runs: past it the requester is told that the
 * command did not finish, instead of hearing nothing.
 */
import type { CommandDispatcher } from "../command-contract.js";
import type { CommandResult } from "../command-result.js";
import type { Config } from "../config.js";
import { ErrorCode } from "../errors.js";
import { orElse } from "../util/deadline.js";

/**
 * What a command may take beyond the diagnosis deadline and one Kubernetes call: the diagnosis
 * deadline bounds reads, this margin what else a command waits on (Redis, a write).
 */
export const COMMAND_MARGIN_MS = 5_000;

/** The bound on one command under this configuration. */
export function commandBoundMs(config: Pick<Config, "diagnosisDeadlineMs" | "kubeTimeoutMs">): number {
  return config.diagnosisDeadlineMs + config.kubeTimeoutMs + COMMAND_MARGIN_MS;
}

/**
 * The registry with a bound on each command: past it the requester is told that the command did
 * not finish, instead of hearing nothing. The command itself is not cancelled (its own timeouts end it).
 */
export function boundedRegistry<R extends CommandDispatcher>(registry: R, ms: number): R {
  return {
    ...registry,
    dispatch: (text, ctx, prefix) =>
      orElse(registry.dispatch(text, ctx, prefix), ms, (): CommandResult => ({
        type: "error",
        error: {
          code: ErrorCode.Upstream,
          message: `No answer within ${Math.round(ms / 1000)} s: a dependency (Kubernetes, AWS or Redis) is not answering; try again later.`,
          details: { timedOut: true, timeoutMs: ms },
        },
      })),
  };
}
