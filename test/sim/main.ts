/**
 * `npm run --silent sim -- --kubeconfig <path> [--scenario <file>] [--port N] [--user NAME]`
 *
 * Starts the Kubernetes API simulator, writes a kubeconfig for it once it listens, prints one
 * line, and runs until SIGTERM/SIGINT. Bad arguments exit 2 with a message.
 */
import { parseArgs } from "node:util";

import { startKubeSim } from "./kube/index.js";
import { loadScenario } from "./scenario.js";

const USAGE =
  "usage: npm run --silent sim -- --kubeconfig <path> [--scenario <file>] [--port <n>] [--user <name>] [--controller-interval-ms <n>]";

function usage(message: string): never {
  process.stderr.write(`sim: ${message}\n${USAGE}\n`);
  process.exit(2);
}

async function main(): Promise<void> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      options: {
        kubeconfig: { type: "string" },
        scenario: { type: "string" },
        port: { type: "string" },
        user: { type: "string" },
        "controller-interval-ms": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    usage(e instanceof Error ? e.message : String(e));
  }
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const kubeconfig = values.kubeconfig;
  if (typeof kubeconfig !== "string" || kubeconfig === "") usage("--kubeconfig <path> is required");
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    usage(`--port must be an integer 0-65535, got ${String(values.port)}`);
  const interval =
    values["controller-interval-ms"] === undefined ? 1000 : Number(values["controller-interval-ms"]);
  if (!Number.isInteger(interval) || interval < 10)
    usage("--controller-interval-ms must be an integer >= 10");

  let scenario;
  if (typeof values.scenario === "string") {
    try {
      scenario = loadScenario(values.scenario);
    } catch (e) {
      usage(e instanceof Error ? e.message : String(e));
    }
  }
  const sim = await startKubeSim({ port, scenario, controllerIntervalMs: interval });
  await sim.writeKubeconfig(kubeconfig, typeof values.user === "string" ? { user: values.user } : {});
  process.stdout.write(`kube API simulator listening on ${sim.url}; kubeconfig written to ${kubeconfig}\n`);

  const shutdown = () => {
    void sim.stop().then(() => process.exit(0));
  };
  process.once("SIGTERM", shutdown);
  process.once("SIGINT", shutdown);
}

main().catch((e: unknown) => {
  process.stderr.write(`sim: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
