/**
 * The AWS Load Balancer Controller (v2.x), simulated in-process over the kube simulator's store
 * and the AWS world: what it does to Ingresses of class `alb` and to the AWS account, with the
 * rules that made the seed incident possible (kubernetes-sigs/aws-load-balancer-controller,
 * `pkg/ingress`, `pkg/networking/backend_sg_provider.go`):
 *
 * - a deleting Ingress with `ingress.k8s.aws/resources`: delete its stack (ALB, target groups,
 *   managed SG, found by the `ingress.k8s.aws/stack` tag), then release the shared backend SG
 *   unless another live Ingress still uses it; `DeleteSecurityGroup` is retried every 2 s on
 *   `DependencyViolation` only, and on timeout the reconcile fails with
 *   `failed to delete securityGroup: timed out waiting for the condition` — logged as a
 *   "Reconciler error", finalizer kept, retried later;
 * - a live Ingress: add the finalizer, create the stack with the controller's names and tags and a
 *   fresh DNS name, and publish the hostname in `status.loadBalancer.ingress[0].hostname`.
 *
 * Each configured Deployment reconciles independently with its own access key, so CloudTrail shows
 * the controller's role as the caller, as in INCIDENT.md step 6.
 */
import { createHash, randomUUID } from "node:crypto";
import { ingressStack, lbcLoadBalancerName } from "../../../src/diagnosis/lbc-names.js";
import { AwsApiError, type AwsWorld, type Tags } from "../aws/index.js";
import type { KubeObject, KubeSim } from "../kube/index.js";

export const LBC_FINALIZER = "ingress.k8s.aws/resources";
const GROUP_FINALIZER_PREFIX = "group.ingress.k8s.aws/";
const TAG = {
  cluster: "elbv2.k8s.aws/cluster",
  stack: "ingress.k8s.aws/stack",
  resource: "ingress.k8s.aws/resource",
  backend: "elbv2.k8s.aws/resource",
} as const;
const INGRESS = { apiVersion: "networking.k8s.io/v1", kind: "Ingress" } as const;
const USER_AGENT = "elbv2.k8s.aws/v2.7.1 aws-sdk-go/1.50.0 (go1.21.6; linux; amd64)";
const TIMEOUT_ERROR = "failed to delete securityGroup: timed out waiting for the condition";

/** One controller Deployment: `namespace/name` and the access key its IRSA role signs with. */
export interface LbcDeployment {
  readonly name: string;
  readonly accessKeyId?: string;
}

/** Settings of the simulated controller. Periods are real milliseconds, compressible for tests. */
export interface LbcOptions {
  readonly cluster: string;
  readonly vpcId: string;
  readonly deployments: readonly LbcDeployment[];
  /** The class it serves (`--ingress-class`, default `alb`). */
  readonly ingressClass: string;
  /** `DeleteSecurityGroup` retry period on DependencyViolation (real: 2 s). */
  readonly retryIntervalMs: number;
  /** Give up on the shared backend SG after this long (real: 2 min). */
  readonly backendSgTimeoutMs: number;
  /** Give up on a stack's managed SG after this long. */
  readonly managedSgTimeoutMs: number;
  /** Requeue delay after a failed reconcile, and the periodic resync. */
  readonly requeueMs: number;
}

/** A running controller. */
export interface LbcController {
  readonly options: LbcOptions;
  /** Reconciles every Ingress once with every Deployment and resolves when all are done. */
  reconcileNow(): Promise<void>;
  stop(): Promise<void>;
}

const DEFAULTS = {
  cluster: "prod-eks",
  vpcId: "vpc-0a1b2c3d4e5f60718",
  ingressClass: "alb",
  retryIntervalMs: 2000,
  backendSgTimeoutMs: 120_000,
  managedSgTimeoutMs: 120_000,
  requeueMs: 10_000,
} as const;

/** A sleep that ends early when the controller stops, so `stop()` never waits out a retry loop. */
const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done);
  });

function sha10(...parts: string[]): string {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return h.digest("hex").slice(0, 10);
}

const alnum = (s: string, n: number): string => s.replace(/[^a-zA-Z0-9]/g, "").slice(0, n);

function meta(o: KubeObject): { name: string; namespace: string; finalizers: string[]; deleting: boolean } {
  const m = o.metadata ?? {};
  return {
    name: m.name ?? "",
    namespace: m.namespace ?? "default",
    finalizers: [...(m.finalizers ?? [])],
    deleting: m.deletionTimestamp !== undefined && m.deletionTimestamp !== null,
  };
}

function annotations(o: KubeObject): Record<string, string> {
  return o.metadata?.annotations ?? {};
}

/** Whether an Ingress's load balancer uses the shared backend SG (no user-given groups, or rules managed). */
function usesBackendSg(o: KubeObject): boolean {
  const a = annotations(o);
  return (
    a["alb.ingress.kubernetes.io/security-groups"] === undefined ||
    a["alb.ingress.kubernetes.io/manage-backend-security-group-rules"] === "true"
  );
}

function hasLbcFinalizer(o: KubeObject): boolean {
  return meta(o).finalizers.some((f) => f === LBC_FINALIZER || f.startsWith(GROUP_FINALIZER_PREFIX));
}

/** Starts the controller; it reconciles at once, after every kube change, and every `requeueMs`. */
export function startLbc(
  input: { kube: KubeSim; aws: AwsWorld; now?: () => Date } & Partial<LbcOptions>,
): LbcController {
  const { kube, aws } = input;
  const now = input.now ?? (() => new Date());
  const options: LbcOptions = {
    cluster: input.cluster ?? DEFAULTS.cluster,
    vpcId: input.vpcId ?? DEFAULTS.vpcId,
    deployments:
      input.deployments && input.deployments.length > 0
        ? input.deployments
        : [{ name: "kube-system/aws-load-balancer-controller" }],
    ingressClass: input.ingressClass ?? DEFAULTS.ingressClass,
    retryIntervalMs: input.retryIntervalMs ?? DEFAULTS.retryIntervalMs,
    backendSgTimeoutMs: input.backendSgTimeoutMs ?? DEFAULTS.backendSgTimeoutMs,
    managedSgTimeoutMs: input.managedSgTimeoutMs ?? DEFAULTS.managedSgTimeoutMs,
    requeueMs: input.requeueMs ?? DEFAULTS.requeueMs,
  };
  let stopped = false;
  const workers = options.deployments.map((d) => new Worker(kube, aws, options, d, now));
  const wakeAll = (): void => {
    for (const w of workers) w.wake();
  };
  const unsubscribe = kube.store.onChange((e) => {
    if (e.def.kind === "Ingress") wakeAll();
  });
  const loops = workers.map((w) => w.run(() => stopped));
  const abort = new AbortController();
  for (const w of workers) w.signal = abort.signal;
  return {
    options,
    reconcileNow: async () => {
      await Promise.all(workers.map((w) => w.reconcileAll()));
    },
    stop: async () => {
      stopped = true;
      abort.abort();
      unsubscribe();
      wakeAll();
      await Promise.all(loops);
    },
  };
}

/** One Deployment's leader: its reconcile loop, identity and pod log. */
class Worker {
  private wakeUp: (() => void) | undefined;
  private pending = true;
  private readonly accessKeyId: string;
  private readonly pod: { namespace: string; name: string } | undefined;
  private readonly container = "aws-load-balancer-controller";
  private running: Promise<void> = Promise.resolve();
  /** Aborted when the controller stops. */
  public signal: AbortSignal = new AbortController().signal;

  public constructor(
    private readonly kube: KubeSim,
    private readonly aws: AwsWorld,
    private readonly options: LbcOptions,
    deployment: LbcDeployment,
    private readonly now: () => Date,
  ) {
    this.accessKeyId =
      deployment.accessKeyId ?? `ASIALBC${sha10(deployment.name).toUpperCase().padEnd(13, "0")}`;
    const [ns = "kube-system", name = deployment.name] = deployment.name.split("/");
    const leader = kube.store
      .list("v1", "Pod", ns)
      .map((p) => p.metadata?.name ?? "")
      .filter((p) => p.startsWith(`${name}-`))
      .sort()[0];
    this.pod = leader !== undefined ? { namespace: ns, name: leader } : undefined;
  }

  public wake(): void {
    this.pending = true;
    this.wakeUp?.();
  }

  public async run(stopped: () => boolean): Promise<void> {
    while (!stopped()) {
      if (this.pending) {
        this.pending = false;
        this.running = this.reconcileAll();
        await this.running;
        continue;
      }
      await new Promise<void>((resolve) => {
        this.wakeUp = resolve;
        void sleep(this.options.requeueMs, this.signal).then(resolve);
      });
      this.wakeUp = undefined;
      this.pending = true;
    }
    await this.running;
  }

  /** One pass over every Ingress of the class; a failure is logged and leaves the object as it is. */
  public async reconcileAll(): Promise<void> {
    const ingresses = this.kube.store.list(INGRESS.apiVersion, INGRESS.kind).filter((o) => this.ownsClass(o));
    for (const ing of ingresses) {
      if (this.signal.aborted) return;
      const m = meta(ing);
      try {
        if (m.deleting) {
          if (m.finalizers.includes(LBC_FINALIZER)) await this.finalize(ing);
        } else {
          this.deploy(ing);
        }
      } catch (err) {
        if (this.signal.aborted) return;
        this.log({
          level: "error",
          msg: "Reconciler error",
          controller: "ingress",
          object: { name: m.name, namespace: m.namespace },
          namespace: m.namespace,
          name: m.name,
          reconcileID: randomUUID(),
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
  }

  private ownsClass(o: KubeObject): boolean {
    const spec = (o as { spec?: { ingressClassName?: string } }).spec;
    const cls = spec?.ingressClassName ?? annotations(o)["kubernetes.io/ingress.class"];
    return cls === this.options.ingressClass;
  }

  private log(fields: Record<string, unknown>): void {
    if (this.pod === undefined) return;
    const { level, ...rest } = fields;
    this.kube.appendLog(this.pod.namespace, this.pod.name, this.container, [
      JSON.stringify({ level, ts: this.now().toISOString(), ...rest }),
    ]);
  }

  /** Records one call in CloudTrail under this controller's identity. */
  private trail(
    service: "ec2" | "elasticloadbalancing",
    action: string,
    params: Record<string, unknown>,
    resource: { type: string; name: string },
    error?: AwsApiError,
  ): void {
    this.aws.recordApiCall({
      service,
      action,
      accessKeyId: this.accessKeyId,
      userAgent: USER_AGENT,
      requestId: this.aws.ids.uuid(),
      region: this.aws.region,
      requestParameters: params,
      responseElements: error ? null : service === "ec2" ? { _return: true } : null,
      ...(error
        ? {
            errorCode: service === "ec2" ? `Client.${error.code}` : error.code,
            errorMessage: error.message,
          }
        : {}),
      resources: [{ ResourceType: resource.type, ResourceName: resource.name }],
    });
  }

  private stackOf(ing: KubeObject): string {
    const m = meta(ing);
    return ingressStack({ namespace: m.namespace, name: m.name, annotations: annotations(ing) }).stack;
  }

  private tagged(arnOrTags: Tags | undefined, stack: string): boolean {
    return arnOrTags?.[TAG.cluster] === this.options.cluster && arnOrTags[TAG.stack] === stack;
  }

  // ---------------------------------------------------------------- deletion

  private async finalize(ing: KubeObject): Promise<void> {
    const stack = this.stackOf(ing);
    const aws = this.aws;
    for (const lb of [...aws.loadBalancers.values()]) {
      if (!this.tagged(aws.tags.get(lb.arn), stack)) continue;
      this.log({ level: "info", logger: "controllers.ingress", msg: "deleting loadBalancer", arn: lb.arn });
      aws.deleteLoadBalancer(lb.arn);
      this.trail(
        "elasticloadbalancing",
        "DeleteLoadBalancer",
        { loadBalancerArn: lb.arn },
        { type: "AWS::ElasticLoadBalancingV2::LoadBalancer", name: lb.arn },
      );
      this.log({ level: "info", logger: "controllers.ingress", msg: "deleted loadBalancer", arn: lb.arn });
    }
    for (const tg of [...aws.targetGroups.values()]) {
      if (!this.tagged(aws.tags.get(tg.arn), stack)) continue;
      this.log({ level: "info", logger: "controllers.ingress", msg: "deleting targetGroup", arn: tg.arn });
      aws.deleteTargetGroup(tg.arn);
      this.trail(
        "elasticloadbalancing",
        "DeleteTargetGroup",
        { targetGroupArn: tg.arn },
        { type: "AWS::ElasticLoadBalancingV2::TargetGroup", name: tg.arn },
      );
      this.log({ level: "info", logger: "controllers.ingress", msg: "deleted targetGroup", arn: tg.arn });
    }
    for (const sg of [...aws.securityGroups.values()]) {
      if (this.tagged(sg.tags, stack) && sg.tags[TAG.resource] === "ManagedLBSecurityGroup") {
        await this.deleteGroup(sg.id, this.options.managedSgTimeoutMs);
      }
    }
    if (!this.backendSgRequired()) {
      const backend = this.backendGroup();
      if (backend !== undefined) await this.deleteGroup(backend, this.options.backendSgTimeoutMs);
    }
    this.removeFinalizer(ing);
  }

  /** `isBackendSGRequired`: a live Ingress with one of the controller's finalizers still uses it. */
  private backendSgRequired(): boolean {
    return this.kube.store
      .list(INGRESS.apiVersion, INGRESS.kind)
      .some((o) => !meta(o).deleting && hasLbcFinalizer(o) && usesBackendSg(o));
  }

  private backendGroup(): string | undefined {
    return [...this.aws.securityGroups.values()].find(
      (g) =>
        g.vpcId === this.options.vpcId &&
        g.tags[TAG.cluster] === this.options.cluster &&
        g.tags[TAG.backend] === "backend-sg",
    )?.id;
  }

  /** `RetryImmediateOnError(2s, timeout, isDependencyViolation, DeleteSecurityGroup)`. */
  private async deleteGroup(groupId: string, timeoutMs: number): Promise<void> {
    this.log({
      level: "info",
      logger: "controllers.ingress",
      msg: "deleting securityGroup",
      securityGroupID: groupId,
    });
    const deadline = performance.now() + timeoutMs;
    const resource = { type: "AWS::EC2::SecurityGroup", name: groupId };
    for (;;) {
      if (!this.aws.securityGroups.has(groupId)) return;
      try {
        this.aws.deleteSecurityGroup(groupId);
        this.trail("ec2", "DeleteSecurityGroup", { groupId }, resource);
        this.log({
          level: "info",
          logger: "controllers.ingress",
          msg: "deleted securityGroup",
          securityGroupID: groupId,
        });
        return;
      } catch (err) {
        if (!(err instanceof AwsApiError)) throw err;
        this.trail("ec2", "DeleteSecurityGroup", { groupId }, resource, err);
        if (err.code !== "DependencyViolation")
          throw new Error(`failed to delete securityGroup: ${err.message}`);
      }
      if (performance.now() + this.options.retryIntervalMs > deadline) throw new Error(TIMEOUT_ERROR);
      await sleep(this.options.retryIntervalMs, this.signal);
      if (this.signal.aborted) throw new Error("controller stopped");
    }
  }

  private removeFinalizer(ing: KubeObject): void {
    const m = meta(ing);
    const cur = this.kube.store.get(INGRESS.apiVersion, INGRESS.kind, m.namespace, m.name);
    if (cur === undefined) return;
    const finalizers = meta(cur).finalizers.filter((f) => f !== LBC_FINALIZER);
    this.kube.store.update({ ...cur, metadata: { ...cur.metadata, name: m.name, finalizers } });
    this.log({
      level: "info",
      logger: "controllers.ingress",
      msg: "successfully cleaned up ingress",
      ingress: `${m.namespace}/${m.name}`,
    });
  }

  // ---------------------------------------------------------------- creation

  /** Synchronous on purpose: two Deployments never interleave between "exists?" and "create". */
  private deploy(ing: KubeObject): void {
    const m = meta(ing);
    const aws = this.aws;
    const stack = this.stackOf(ing);
    let cur = ing;
    if (!m.finalizers.includes(LBC_FINALIZER)) {
      cur = this.kube.store.update({
        ...cur,
        metadata: { ...cur.metadata, name: m.name, finalizers: [...m.finalizers, LBC_FINALIZER] },
      });
    }
    let lb = [...aws.loadBalancers.values()].find(
      (x) =>
        this.tagged(aws.tags.get(x.arn), stack) && aws.tags.get(x.arn)?.[TAG.resource] === "LoadBalancer",
    );
    if (lb === undefined) lb = this.createStack(cur, stack);
    const status = (cur as { status?: { loadBalancer?: { ingress?: { hostname?: string }[] } } }).status;
    if (status?.loadBalancer?.ingress?.[0]?.hostname !== lb.dnsName) {
      this.kube.store.update(
        { ...cur, status: { loadBalancer: { ingress: [{ hostname: lb.dnsName }] } } },
        { subresource: "status" },
      );
    }
  }

  private createStack(ing: KubeObject, stack: string): ReturnType<AwsWorld["createLoadBalancer"]> {
    const aws = this.aws;
    const m = meta(ing);
    const a = annotations(ing);
    const scheme =
      a["alb.ingress.kubernetes.io/scheme"] === "internet-facing" ? "internet-facing" : "internal";
    const lbName = lbcLoadBalancerName(this.options.cluster, {
      stack,
      explicitGroup: a["alb.ingress.kubernetes.io/group.name"] !== undefined,
      scheme,
    });
    const hash = lbName.slice(-10);
    const base = { [TAG.cluster]: this.options.cluster, [TAG.stack]: stack };
    const groups: string[] = [];
    const userGroups = a["alb.ingress.kubernetes.io/security-groups"];
    if (userGroups !== undefined) {
      groups.push(
        ...userGroups
          .split(",")
          .map((s) => s.trim())
          .filter((s) => s !== ""),
      );
    } else {
      const name = `k8s-${alnum(m.namespace, 8)}-${alnum(m.name, 8)}-${hash}`;
      const managed =
        [...aws.securityGroups.values()].find((g) => g.name === name && g.vpcId === this.options.vpcId) ??
        aws.createSecurityGroup({
          name,
          description: "[k8s] Managed SecurityGroup for LoadBalancer",
          vpcId: this.options.vpcId,
          tags: { ...base, [TAG.resource]: "ManagedLBSecurityGroup" },
        });
      this.trail(
        "ec2",
        "CreateSecurityGroup",
        { groupName: name, vpcId: this.options.vpcId },
        {
          type: "AWS::EC2::SecurityGroup",
          name: managed.id,
        },
      );
      for (const port of this.listenPorts(ing)) {
        aws.authorize(managed.id, false, [
          { ipProtocol: "tcp", fromPort: port.port, toPort: port.port, cidrIpv4: "0.0.0.0/0" },
        ]);
      }
      groups.push(managed.id);
    }
    if (usesBackendSg(ing)) groups.push(this.backendGroup() ?? this.createBackendGroup());

    const backend = this.firstBackend(ing);
    const tgName = `k8s-${alnum(m.namespace, 8)}-${alnum(backend.service, 8)}-${sha10(stack, backend.service, String(backend.port))}`;
    const tg = aws.createTargetGroup({
      name: tgName,
      port: backend.port,
      vpcId: this.options.vpcId,
      targetType: a["alb.ingress.kubernetes.io/target-type"] === "instance" ? "instance" : "ip",
      tags: { ...base, [TAG.resource]: `${stack}-${backend.service}:${backend.port}` },
    });
    this.trail(
      "elasticloadbalancing",
      "CreateTargetGroup",
      { name: tgName },
      {
        type: "AWS::ElasticLoadBalancingV2::TargetGroup",
        name: tg.arn,
      },
    );
    // A new ALB always gets a new DNS suffix, even under the same name (INCIDENT.md step 8).
    const lb = aws.createLoadBalancer({
      name: lbName,
      scheme,
      securityGroups: groups,
      vpcId: this.options.vpcId,
      tags: { ...base, [TAG.resource]: "LoadBalancer" },
    });
    this.trail(
      "elasticloadbalancing",
      "CreateLoadBalancer",
      { name: lbName, scheme },
      {
        type: "AWS::ElasticLoadBalancingV2::LoadBalancer",
        name: lb.arn,
      },
    );
    aws.createLoadBalancerEnis(lb.arn);
    for (const port of this.listenPorts(ing)) {
      const l = aws.createListener({
        loadBalancerArn: lb.arn,
        port: port.port,
        protocol: port.protocol,
        defaultTargetGroupArn: tg.arn,
      });
      this.trail(
        "elasticloadbalancing",
        "CreateListener",
        { loadBalancerArn: lb.arn, port: port.port },
        {
          type: "AWS::ElasticLoadBalancingV2::Listener",
          name: l.arn,
        },
      );
    }
    this.log({
      level: "info",
      logger: "controllers.ingress",
      msg: "successfully deployed model",
      ingressGroup: stack,
    });
    return lb;
  }

  private createBackendGroup(): string {
    const name = `k8s-traffic-${alnum(this.options.cluster, 232)}-${sha10(this.options.cluster)}`;
    const sg = this.aws.createSecurityGroup({
      name,
      description: "[k8s] Shared Backend SecurityGroup for LoadBalancer",
      vpcId: this.options.vpcId,
      tags: { [TAG.cluster]: this.options.cluster, [TAG.backend]: "backend-sg" },
    });
    this.trail(
      "ec2",
      "CreateSecurityGroup",
      { groupName: name, vpcId: this.options.vpcId },
      {
        type: "AWS::EC2::SecurityGroup",
        name: sg.id,
      },
    );
    return sg.id;
  }

  private listenPorts(ing: KubeObject): { protocol: string; port: number }[] {
    const raw = annotations(ing)["alb.ingress.kubernetes.io/listen-ports"];
    if (raw === undefined) return [{ protocol: "HTTP", port: 80 }];
    try {
      const parsed = JSON.parse(raw) as Record<string, number>[];
      return parsed.flatMap((e) => Object.entries(e).map(([protocol, port]) => ({ protocol, port })));
    } catch {
      return [{ protocol: "HTTP", port: 80 }];
    }
  }

  private firstBackend(ing: KubeObject): { service: string; port: number } {
    type Backend = { service?: { name?: string; port?: { number?: number } } };
    const spec = (
      ing as {
        spec?: { defaultBackend?: Backend; rules?: { http?: { paths?: { backend?: Backend }[] } }[] };
      }
    ).spec;
    const b = spec?.rules?.[0]?.http?.paths?.[0]?.backend ?? spec?.defaultBackend;
    return { service: b?.service?.name ?? "default", port: b?.service?.port?.number ?? 80 };
  }
}
