/**
 * A test bot runtime, from the one world helper (`test/helpers/world.ts`): the environment it starts
 * from (`botEnv`), AWS clients on the simulated account (`simAwsClients`), and `startRuntime` for a
 * test that owns its simulators and fake Slack and wants only the runtime on top.
 */
import type { Config } from "../../src/config.js";
import type { Runtime, RuntimeOptions } from "../../src/runtime.js";
import { bootRuntime, type RuntimeTuning } from "../helpers/world.js";

export { botEnv, simAwsClients, type BotEnvBase } from "../helpers/world.js";

export interface StartedRuntime {
  readonly runtime: Runtime;
  /** Its Slack request URL (`/slack/events` on the port it listens on). */
  readonly events: string;
}

/**
 * The runtime with a silent log, the wall clock and the given kube (and AWS), started;
 * `options` are further runtime options (shorter timings).
 */
export async function startRuntime(
  config: Config,
  services: Pick<NonNullable<RuntimeOptions["services"]>, "kube" | "aws">,
  options: RuntimeTuning = {},
): Promise<StartedRuntime> {
  const { runtime, events } = await bootRuntime({ config, services, runtime: options });
  return { runtime, events };
}
