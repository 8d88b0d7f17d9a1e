/**
 * `npm run --silent sim -- --kubeconfig <path> [--scenario <file>] [--aws-env <path>] [--port N] [--aws-port N] [--user NAME]`
 *
 * Starts one world (the Kubernetes API simulator, the AWS simulator and — when the scenario
 * enables it — the simulated Load Balancer Controller), writes a kubeconfig once it listens and,
 * with `--aws-env`, an env file for the AWS CLI/SDK and the bot, prints one line per endpoint, and
 * runs until SIGTERM/SIGINT. Bad arguments exit 2 with a message.
 */
import { writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";

import { loadScenario } from "./scenario.js";
import { startWorld } from "./world.js";

const USAGE =
  "usage: npm run --silent sim -- --kubeconfig <path> [--scenario <file>] [--aws-env <path>] [--port <n>] [--aws-port <n>] [--user <name>] [--controller-interval-ms <n>] [--no-lbc]";

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
        "aws-port": { type: "string" },
        "aws-env": { type: "string" },
        "no-lbc": { type: "boolean" },
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
  const awsPort = values["aws-port"] === undefined ? 0 : Number(values["aws-port"]);
  if (!Number.isInteger(awsPort) || awsPort < 0 || awsPort > 65535)
    usage(`--aws-port must be an integer 0-65535, got ${String(values["aws-port"])}`);
  const awsEnv = values["aws-env"];
  if (awsEnv !== undefined && (typeof awsEnv !== "string" || awsEnv === ""))
    usage("--aws-env needs a file path");
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
  const world = await startWorld({
    ...(scenario !== undefined ? { scenario } : {}),
    kubePort: port,
    awsPort,
    controllerIntervalMs: interval,
    ...(values["no-lbc"] === true ? { lbc: false as const } : {}),
  });
  await world.kube.writeKubeconfig(kubeconfig, typeof values.user === "string" ? { user: values.user } : {});
  process.stdout.write(
    `kube API simulator listening on ${world.kube.url}; kubeconfig written to ${kubeconfig}\n`,
  );
  if (typeof awsEnv === "string") {
    const env = {
      ...world.aws.env(),
      UNSTUCK_CLUSTER_NAME: scenario?.cluster?.name ?? world.lbc?.options.cluster ?? "prod-eks",
    };
    await writeFile(
      awsEnv,
      Object.entries(env)
        .map(([k, v]) => `${k}=${v}`)
        .join("\n") + "\n",
      { mode: 0o600 },
    );
  }
  process.stdout.write(
    `AWS simulator listening on ${world.aws.url}${typeof awsEnv === "string" ? `; env written to ${awsEnv}` : ""}${world.lbc ? `; load balancer controller running for ${world.lbc.options.cluster}` : ""}\n`,
  );

  const shutdown = () => {
    void world.stop().then(() => process.exit(0));
  };
  process.once("SIGTERM", shutdown);
  process.once("SIGINT", shutdown);
}

main().catch((e: unknown) => {
  process.stderr.write(`sim: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
