/**
 * One simulated world: a scenario file's `kube:` and `aws:` sections loaded against the same clock
 * (so `now-22m` means the same instant in a pod log and in CloudTrail), and — where the scenario's
 * `lbc:` section enables it — the simulated AWS Load Balancer Controller joining the two.
 */
import { startAwsSim, type AwsFaults, type AwsSim } from "./aws/index.js";
import { startDnsServer, type DnsServer } from "./dns/index.js";
import { startHttpFront, type HttpFront } from "./http-front/index.js";
import { startKubeSim, type KubeSim } from "./kube/index.js";
import { startLbc, type LbcController, type LbcOptions } from "./lbc/index.js";
import { parseLbcSection } from "./lbc/scenario.js";
import { loadScenario, type Scenario } from "./scenario.js";

/** A world's CloudFront deploy time unless the options say otherwise (AWS: minutes). */
export const DEFAULT_CLOUDFRONT_DEPLOY_MS = 3000;
/** A world's Route 53 PENDING → INSYNC time unless the options say otherwise (AWS: ~60 s). */
export const DEFAULT_ROUTE53_SYNC_MS = 1000;

/** Options for {@link startWorld}. */
export interface WorldOptions {
  /** A scenario file path, YAML text, or an already loaded scenario. */
  readonly scenario?: string | Scenario;
  /** The one clock of the world (default: the wall clock). */
  readonly now?: () => Date;
  readonly kubePort?: number;
  readonly awsPort?: number;
  /** Namespace controller period in the kube simulator (default 1000 ms). */
  readonly controllerIntervalMs?: number;
  /** `false`: the kube simulator's namespace controller does not run. */
  readonly namespaceController?: boolean;
  readonly awsFaults?: AwsFaults;
  /**
   * How long a distribution stays `InProgress` after UpdateDistribution (default
   * {@link DEFAULT_CLOUDFRONT_DEPLOY_MS}: long enough that code must really wait, short for tests).
   */
  readonly cloudFrontDeployMs?: number;
  /** How long a Route 53 change stays `PENDING` (default {@link DEFAULT_ROUTE53_SYNC_MS}). */
  readonly route53SyncMs?: number;
  /** Port of the DNS server (UDP and TCP; 0 or unset picks a free one). */
  readonly dnsPort?: number;
  /** Port of the HTTP front (0 or unset picks a free one). */
  readonly httpFrontPort?: number;
  /**
   * The simulated controller: `false` keeps it off even when the scenario enables it; an object
   * overrides the scenario's settings (tests compress its retry period and timeouts this way).
   */
  readonly lbc?: false | Partial<LbcOptions>;
}

/** A running world. */
export interface World {
  readonly scenario: Scenario | undefined;
  readonly kube: KubeSim;
  readonly aws: AwsSim;
  /** DNS on 127.0.0.1 answering from the world's zones and load balancers (`dig @127.0.0.1 -p <port>`). */
  readonly dns: DnsServer;
  /** HTTP on 127.0.0.1 answering per `Host` as the traffic path (Route 53 → CloudFront → ALB) would. */
  readonly httpFront: HttpFront;
  /** Present when the scenario (or the options) enable the controller. */
  readonly lbc?: LbcController;
  stop(): Promise<void>;
}

/** Starts the kube and AWS simulators from one scenario, then the controller if enabled. */
export async function startWorld(options: WorldOptions = {}): Promise<World> {
  const now = options.now ?? (() => new Date());
  const scenario =
    typeof options.scenario === "string" ? loadScenario(options.scenario, { now: now() }) : options.scenario;
  const kube = await startKubeSim({
    ...(scenario !== undefined ? { scenario } : {}),
    ...(options.kubePort !== undefined ? { port: options.kubePort } : {}),
    ...(options.controllerIntervalMs !== undefined
      ? { controllerIntervalMs: options.controllerIntervalMs }
      : {}),
    ...(options.namespaceController !== undefined
      ? { namespaceController: options.namespaceController }
      : {}),
    now,
  });
  let aws: AwsSim;
  try {
    aws = await startAwsSim({
      ...(scenario?.aws !== undefined ? { scenario: scenario.aws } : {}),
      ...(options.awsPort !== undefined ? { port: options.awsPort } : {}),
      ...(options.awsFaults !== undefined ? { faults: options.awsFaults } : {}),
      cloudFrontDeployMs: options.cloudFrontDeployMs ?? DEFAULT_CLOUDFRONT_DEPLOY_MS,
      route53SyncMs: options.route53SyncMs ?? DEFAULT_ROUTE53_SYNC_MS,
      now,
    });
  } catch (err) {
    await kube.stop();
    throw err;
  }
  let dns: DnsServer;
  let httpFront: HttpFront;
  try {
    dns = await startDnsServer(aws.world, options.dnsPort !== undefined ? { port: options.dnsPort } : {});
    try {
      httpFront = await startHttpFront(
        aws.world,
        options.httpFrontPort !== undefined ? { port: options.httpFrontPort } : {},
      );
    } catch (err) {
      await dns.stop();
      throw err;
    }
  } catch (err) {
    await Promise.all([kube.stop(), aws.stop()]);
    throw err;
  }

  const section = parseLbcSection(scenario?.lbc);
  const enabled = options.lbc !== false && (section.enabled || options.lbc !== undefined);
  const lbc = enabled
    ? startLbc({
        kube,
        aws: aws.world,
        ...section,
        ...(scenario?.cluster?.name !== undefined && section.cluster === undefined
          ? { cluster: scenario.cluster.name }
          : {}),
        ...(typeof options.lbc === "object" ? options.lbc : {}),
        now,
      })
    : undefined;

  return {
    scenario,
    kube,
    aws,
    dns,
    httpFront,
    ...(lbc !== undefined ? { lbc } : {}),
    async stop() {
      await lbc?.stop();
      await Promise.all([kube.stop(), aws.stop(), dns.stop(), httpFront.stop()]);
    },
  };
}
