/**
 * The AWS Load Balancer Controller (v2.x), simulated in-process over the kube simulator's store
 * and the AWS world (kubernetes-sigs/aws-load-balancer-controller: `controllers/ingress`,
 * `controllers/service`, `pkg/ingress`, `pkg/service`, `pkg/networking`). It imports nothing from
 * the product: names come from `names.ts`, models from `model.ts`.
 *
 * - IngressGroups: every Ingress of the class belongs to its explicit group
 *   (`alb.ingress.kubernetes.io/group.name`, finalizer `group.ingress.k8s.aws/<group>`) or to its
 *   own implicit one (`ingress.k8s.aws/resources`). A group is reconciled as a whole: its live
 *   members are the model; its deleting members (and any that left it) are "inactive". The model
 *   is deployed, then the inactive members' finalizers go. A model that fails (one member's
 *   unknown certificate, a conflict) fails the whole group: nothing changes, every finalizer stays,
 *   and the "Reconciler error" is keyed by the group's reconcile request — for an explicit group
 *   `{namespace: "", name: <group>}`.
 * - Services of type LoadBalancer with class `service.k8s.aws/nlb` (or the `external` type
 *   annotation): an NLB with a managed SG and the backend SG, finalizer `service.k8s.aws/resources`.
 * - The shared backend SG (`k8s-traffic-<cluster>-<hash>`): its users are tracked per controller
 *   process as upstream's `objectsMap`; it is deleted (2 s retries on DependencyViolation, then
 *   `failed to delete securityGroup: timed out waiting for the condition`) only when no Ingress or
 *   Service holding an LBC finalizer still requires it or is unknown to the process.
 * - Node rules: while target groups behind load balancers that carry the backend SG exist, the node
 *   security group allows the backend SG on their ports (one tcp rule, min–max port, description
 *   `elbv2.k8s.aws/targetGroupBinding=shared`, as upstream's restricted rules); the rule is revoked
 *   when none needs it.
 * - TargetGroupBindings (`elbv2.k8s.aws/v1beta1`, served once {@link TARGET_GROUP_BINDING_CRD} is
 *   in the cluster): upstream's `targetGroupBinding` controller. A live binding gets the finalizer
 *   `elbv2.k8s.aws/resources`; its target group (owned by someone else: never created or deleted
 *   here) is made to hold exactly the Service's endpoints — ready pod IPs and target ports for
 *   `targetType: ip` (EndpointSlices, else the Endpoints object; none: no targets), the ready
 *   nodes' instance ids (`spec.providerID`) and the node port for `instance` — with
 *   RegisterTargets/DeregisterTargets in CloudTrail, then the Normal event `SuccessfullyReconciled`.
 *   A missing Service or port is the Warning event `BackendNotFound` (`backend not found: …`) and
 *   a cleanup. A missing target group fails the reconcile (`TargetGroupNotFound` in a "Reconciler
 *   error" log line, no event, as upstream) and the finalizer stays. A deleting binding has every
 *   target of its group deregistered, then loses its finalizer; a group that no longer exists
 *   counts as cleaned up (upstream ignores TargetGroupNotFound there). A cleanup the controller's
 *   IAM role may not do (`deniedActions`) is the Warning event `FailedCleanup` (`Failed cleanup
 *   due to …`) and the finalizer stays.
 *
 * Each configured Deployment reconciles independently with its own access key, so CloudTrail shows
 * the controller's role as the caller, as in docs/incident.md, step 6.
 *
 * Departures from upstream, on purpose: a model is validated (certificates) before anything is
 * changed, where upstream fails at the listener after earlier resources were synced; a live stack
 * that never used the backend SG is remembered as "not requiring it" (upstream forgets it right
 * after, which would keep the backend SG alive whenever any unrelated Ingress has a finalizer);
 * node rules the process did not manage itself are never garbage-collected (upstream collects
 * labelled rules on tagged node SGs once it has seen every TargetGroupBinding), so a leftover rule
 * stays a dependent object as in the incident. The controller makes no TargetGroupBinding objects
 * for its own Ingress/Service stacks (upstream does): those stacks' target groups get no targets.
 * A TargetGroupBinding does not open the node security group (upstream's networking rules), pod
 * readiness gates are not set, and targets leave at once (no deregistration delay).
 */
import { createHash, randomUUID } from "node:crypto";
import { AwsApiError, type AwsWorld, type LoadBalancer, type Tags } from "../aws/index.js";
import type { KubeObject, KubeSim } from "../kube/index.js";
import {
  annotations,
  buildIngressModel,
  buildServiceModel,
  groupIdOf,
  isNlbService,
  sortMembers,
  TAGS,
  type StackModel,
} from "./model.js";
import { backendSgName, groupFinalizer, groupIdString, isExplicit, type GroupId } from "./names.js";

export const LBC_FINALIZER = "ingress.k8s.aws/resources";
export const SERVICE_FINALIZER = "service.k8s.aws/resources";
export const GROUP_FINALIZER_PREFIX = "group.ingress.k8s.aws/";
export const SHARED_RULE_DESCRIPTION = "elbv2.k8s.aws/targetGroupBinding=shared";
export const TGB_FINALIZER = "elbv2.k8s.aws/resources";
const INGRESS = { apiVersion: "networking.k8s.io/v1", kind: "Ingress" } as const;
const TGB = { apiVersion: "elbv2.k8s.aws/v1beta1", kind: "TargetGroupBinding" } as const;

const tgbPrinterColumns = [
  {
    name: "SERVICE-NAME",
    type: "string",
    jsonPath: ".spec.serviceRef.name",
    description: "The Kubernetes Service's name",
  },
  {
    name: "SERVICE-PORT",
    type: "string",
    jsonPath: ".spec.serviceRef.port",
    description: "The Kubernetes Service's port",
  },
  {
    name: "TARGET-TYPE",
    type: "string",
    jsonPath: ".spec.targetType",
    description: "The AWS TargetGroup's TargetType",
  },
  {
    name: "ARN",
    type: "string",
    jsonPath: ".spec.targetGroupARN",
    description: "The AWS TargetGroup's Amazon Resource Name",
    priority: 1,
  },
  { name: "AGE", type: "date", jsonPath: ".metadata.creationTimestamp" },
];

/**
 * The TargetGroupBinding CRD as the controller's Helm chart installs it (group `elbv2.k8s.aws`,
 * v1alpha1 served, v1beta1 served and stored, status subresource). A scenario lists it among its
 * objects (or a test creates it) for the kube simulator to serve `targetgroupbindings`.
 */
export const TARGET_GROUP_BINDING_CRD: KubeObject = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "targetgroupbindings.elbv2.k8s.aws" },
  spec: {
    group: "elbv2.k8s.aws",
    names: {
      kind: "TargetGroupBinding",
      listKind: "TargetGroupBindingList",
      plural: "targetgroupbindings",
      singular: "targetgroupbinding",
    },
    scope: "Namespaced",
    versions: ["v1alpha1", "v1beta1"].map((name) => ({
      name,
      served: true,
      storage: name === "v1beta1",
      additionalPrinterColumns: tgbPrinterColumns,
      schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
      subresources: { status: {} },
    })),
  },
};
const SERVICE = { apiVersion: "v1", kind: "Service" } as const;
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
  /** The VPC's CIDR: the source an internal NLB's managed SG allows. */
  readonly vpcCidr: string;
  readonly deployments: readonly LbcDeployment[];
  /** The class it serves (`--ingress-class`, default `alb`). */
  readonly ingressClass: string;
  /** ACM certificate ARNs that exist in the account; undefined: every ARN does. */
  readonly certificates?: readonly string[];
  /**
   * The node security group that gets the backend SG's rules; default: the one group in the VPC
   * tagged `kubernetes.io/cluster/<cluster>` (what upstream resolves from the targets' ENIs).
   */
  readonly nodeSecurityGroupId?: string;
  /** `DeleteSecurityGroup` retry period on DependencyViolation (real: 2 s). */
  readonly retryIntervalMs: number;
  /** Give up on the shared backend SG after this long (real: 2 min). */
  readonly backendSgTimeoutMs: number;
  /** Give up on a stack's managed SG after this long. */
  readonly managedSgTimeoutMs: number;
  /** Requeue delay after a failed reconcile, and the periodic resync. */
  readonly requeueMs: number;
  /**
   * AWS actions the controller's IAM role may not call (`DeregisterTargets` or
   * `elasticloadbalancing:DeregisterTargets`); applies to the TargetGroupBinding target calls.
   */
  readonly deniedActions?: readonly string[];
}

/** A running controller. */
export interface LbcController {
  readonly options: LbcOptions;
  /** Reconciles every IngressGroup and Service once with every Deployment and resolves when all are done. */
  reconcileNow(): Promise<void>;
  stop(): Promise<void>;
}

const DEFAULTS = {
  cluster: "prod-eks",
  vpcId: "vpc-0a1b2c3d4e5f60718",
  vpcCidr: "10.0.0.0/16",
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

function meta(o: KubeObject): { name: string; namespace: string; finalizers: string[]; deleting: boolean } {
  const m = o.metadata ?? {};
  return {
    name: m.name ?? "",
    namespace: m.namespace ?? "default",
    finalizers: [...(m.finalizers ?? [])],
    deleting: m.deletionTimestamp !== undefined && m.deletionTimestamp !== null,
  };
}

const key = (o: KubeObject): string => `${meta(o).namespace}/${meta(o).name}`;

function hasIngressFinalizer(o: KubeObject): boolean {
  return meta(o).finalizers.some((f) => f === LBC_FINALIZER || f.startsWith(GROUP_FINALIZER_PREFIX));
}

/** What a TargetGroupBinding's spec says (v1beta1). */
interface TgbSpec {
  readonly targetGroupARN: string;
  readonly targetType: string | undefined;
  readonly serviceRef: { readonly name: string; readonly port: number | string };
}

function tgbSpec(o: KubeObject): TgbSpec {
  const spec = (o.spec ?? {}) as {
    targetGroupARN?: string;
    targetType?: string;
    serviceRef?: { name?: string; port?: number | string };
  };
  return {
    targetGroupARN: spec.targetGroupARN ?? "",
    targetType: spec.targetType,
    serviceRef: { name: spec.serviceRef?.name ?? "", port: spec.serviceRef?.port ?? 0 },
  };
}

/**
 * `IsNodeSuitableAsTrafficProxy` and the Ready filter: a node whose Ready condition is True, not
 * labelled `node.kubernetes.io/exclude-from-external-load-balancers`, not being removed by the
 * cluster autoscaler.
 */
function nodeServesTraffic(n: KubeObject): boolean {
  if (n.metadata?.labels?.["node.kubernetes.io/exclude-from-external-load-balancers"] !== undefined)
    return false;
  const spec = (n.spec ?? {}) as { taints?: { key?: string }[] };
  if ((spec.taints ?? []).some((t) => t.key === "ToBeDeletedByClusterAutoscaler")) return false;
  const status = (n.status ?? {}) as { conditions?: { type?: string; status?: string }[] };
  return (status.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");
}

/** The EC2 instance id of a node: the last segment of `spec.providerID` (`aws:///<az>/<id>`). */
function instanceIdOf(n: KubeObject): string {
  const providerId = (n.spec as { providerID?: string } | undefined)?.providerID;
  const id = providerId?.split("/").pop();
  if (id === undefined || id === "")
    throw new Error(`providerID is not specified for node: ${n.metadata?.name ?? ""}`);
  return id;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The kinds whose changes wake the controller (its watches: Ingress, Service, TargetGroupBinding and their backends). */
const WATCHED = new Set(["Ingress", "Service", "TargetGroupBinding", "Endpoints", "EndpointSlice", "Node"]);

/** Starts the controller; it reconciles at once, after every Ingress/Service change, and every `requeueMs`. */
export function startLbc(
  input: { kube: KubeSim; aws: AwsWorld; now?: () => Date } & Partial<LbcOptions>,
): LbcController {
  const { kube, aws } = input;
  const now = input.now ?? (() => new Date());
  const options: LbcOptions = {
    cluster: input.cluster ?? DEFAULTS.cluster,
    vpcId: input.vpcId ?? DEFAULTS.vpcId,
    vpcCidr: input.vpcCidr ?? DEFAULTS.vpcCidr,
    deployments:
      input.deployments && input.deployments.length > 0
        ? input.deployments
        : [{ name: "kube-system/aws-load-balancer-controller" }],
    ingressClass: input.ingressClass ?? DEFAULTS.ingressClass,
    ...(input.certificates !== undefined ? { certificates: input.certificates } : {}),
    ...(input.nodeSecurityGroupId !== undefined ? { nodeSecurityGroupId: input.nodeSecurityGroupId } : {}),
    retryIntervalMs: input.retryIntervalMs ?? DEFAULTS.retryIntervalMs,
    backendSgTimeoutMs: input.backendSgTimeoutMs ?? DEFAULTS.backendSgTimeoutMs,
    managedSgTimeoutMs: input.managedSgTimeoutMs ?? DEFAULTS.managedSgTimeoutMs,
    requeueMs: input.requeueMs ?? DEFAULTS.requeueMs,
    ...(input.deniedActions !== undefined ? { deniedActions: input.deniedActions } : {}),
  };
  let stopped = false;
  const abort = new AbortController();
  const workers = options.deployments.map((d) => new Worker(kube, aws, options, d, now, abort.signal));
  const wakeAll = (): void => {
    for (const w of workers) w.wake();
  };
  const unsubscribe = kube.store.onChange((e) => {
    if (WATCHED.has(e.def.kind)) wakeAll();
  });
  const loops = workers.map((w) => w.run(() => stopped));
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

/** A reconcile request as controller-runtime logs it. */
interface Request {
  readonly controller: "ingress" | "service" | "targetGroupBinding";
  readonly namespace: string;
  readonly name: string;
}

/** One Deployment's leader: its reconcile loop, identity, pod log and in-memory state. */
class Worker {
  private wakeUp: (() => void) | undefined;
  private pending = true;
  private readonly accessKeyId: string;
  private readonly pod: { namespace: string; name: string } | undefined;
  private readonly container = "aws-load-balancer-controller";
  private running: Promise<void> = Promise.resolve();
  /** upstream `objectsMap`: `ingress/ns/name` or `service/ns/name` → requires the backend SG. */
  private readonly backendUsers = new Map<string, boolean>();
  /** Whether this process has put the shared rule on the node SG (upstream's tracked endpoint SGs). */
  private nodeSgTracked = false;

  public constructor(
    private readonly kube: KubeSim,
    private readonly aws: AwsWorld,
    private readonly options: LbcOptions,
    deployment: LbcDeployment,
    private readonly now: () => Date,
    private readonly signal: AbortSignal,
  ) {
    this.accessKeyId =
      deployment.accessKeyId ??
      `ASIALBC${createHash("sha256").update(deployment.name).digest("hex").slice(0, 10).toUpperCase().padEnd(13, "0")}`;
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

  /**
   * One pass: every IngressGroup, then every Service. Groups with live members go first, so the
   * process knows who uses the backend SG before a deletion asks whether it is still required
   * (a long-running controller knows that from earlier reconciles).
   */
  public async reconcileAll(): Promise<void> {
    const ingresses = this.kube.store.list(INGRESS.apiVersion, INGRESS.kind);
    const groups = new Map<string, { id: GroupId; live: boolean }>();
    const note = (id: GroupId, live: boolean): void => {
      const k = `${id.namespace}/${id.name}`;
      groups.set(k, { id, live: live || (groups.get(k)?.live ?? false) });
    };
    for (const ing of ingresses) {
      const m = meta(ing);
      if (!m.deleting && this.ownsClass(ing)) note(groupIdOf(ing), true);
      for (const f of m.finalizers) {
        if (f === LBC_FINALIZER) note({ namespace: m.namespace, name: m.name }, false);
        else if (f.startsWith(GROUP_FINALIZER_PREFIX))
          note({ namespace: "", name: f.slice(GROUP_FINALIZER_PREFIX.length) }, false);
      }
    }
    const ordered = [...groups.values()].sort((a, b) => Number(b.live) - Number(a.live));
    for (const g of ordered) {
      if (this.signal.aborted) return;
      await this.guard({ controller: "ingress", namespace: g.id.namespace, name: g.id.name }, () =>
        this.reconcileGroup(g.id),
      );
    }
    const services = this.kube.store
      .list(SERVICE.apiVersion, SERVICE.kind)
      .filter((s) => (!meta(s).deleting && isNlbService(s)) || meta(s).finalizers.includes(SERVICE_FINALIZER))
      .sort((a, b) => Number(meta(a).deleting) - Number(meta(b).deleting));
    for (const svc of services) {
      if (this.signal.aborted) return;
      const m = meta(svc);
      await this.guard({ controller: "service", namespace: m.namespace, name: m.name }, () =>
        this.reconcileService(m.namespace, m.name),
      );
    }
    for (const tgb of this.listTgbs()) {
      if (this.signal.aborted) return;
      const m = meta(tgb);
      await this.guard({ controller: "targetGroupBinding", namespace: m.namespace, name: m.name }, () =>
        this.reconcileTgb(m.namespace, m.name),
      );
    }
  }

  /** Runs one reconcile; a failure is logged as controller-runtime does and changes nothing else. */
  private async guard(req: Request, fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      if (this.signal.aborted) return;
      this.log({
        level: "error",
        msg: "Reconciler error",
        controller: req.controller,
        // types.NamespacedName.MarshalLog: `namespace` is omitempty, so an explicit group shows only its name.
        object: req.namespace === "" ? { name: req.name } : { name: req.name, namespace: req.namespace },
        namespace: req.namespace,
        name: req.name,
        reconcileID: randomUUID(),
        error: err instanceof Error ? err.message : String(err),
      });
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

  private info(logger: string, msg: string, fields: Record<string, unknown> = {}): void {
    this.log({ level: "info", logger, msg, ...fields });
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

  private modelContext(): Parameters<typeof buildIngressModel>[2] {
    return {
      cluster: this.options.cluster,
      vpcCidr: this.options.vpcCidr,
      service: (namespace, name) => this.kube.store.get(SERVICE.apiVersion, SERVICE.kind, namespace, name),
    };
  }

  // ---------------------------------------------------------------- IngressGroups

  /** `groupReconciler.reconcile`: load, add finalizers, build and deploy, status, release, remove finalizers. */
  private async reconcileGroup(id: GroupId): Promise<void> {
    const finalizer = groupFinalizer(id);
    const all = this.kube.store.list(INGRESS.apiVersion, INGRESS.kind);
    const sameGroup = (o: KubeObject): boolean => {
      const g = groupIdOf(o);
      return g.namespace === id.namespace && g.name === id.name;
    };
    const active = sortMembers(all.filter((o) => !meta(o).deleting && this.ownsClass(o) && sameGroup(o)));
    const inactive = all.filter(
      (o) =>
        !active.includes(o) &&
        meta(o).finalizers.includes(finalizer) &&
        (isExplicit(id) || (meta(o).namespace === id.namespace && meta(o).name === id.name)),
    );
    const members = active.map((m) => this.addFinalizer(m, finalizer));

    const model = buildIngressModel(id, members, this.modelContext());
    const logger = "controllers.ingress";
    const lb = model.lb !== undefined ? this.deploy(model, logger) : await this.deleteStack(model, logger);
    this.reconcileNodeRules();

    if (lb !== undefined) {
      for (const m of members) this.publishHostname(INGRESS, m, lb.dnsName);
      this.info(logger, "successfully deployed model", { ingressGroup: groupIdString(id) });
    }
    const activeKeys = members.map((m) => `ingress/${key(m)}`);
    if (model.usesBackendSg) for (const k of activeKeys) this.backendUsers.set(k, true);
    else await this.releaseBackendSg(activeKeys, false, logger);
    if (inactive.length > 0) {
      await this.releaseBackendSg(
        inactive.map((m) => `ingress/${key(m)}`),
        true,
        logger,
      );
      for (const m of inactive) this.removeFinalizer(INGRESS, m, finalizer, logger);
    }
  }

  // ---------------------------------------------------------------- Services

  private async reconcileService(namespace: string, name: string): Promise<void> {
    const cur = this.kube.store.get(SERVICE.apiVersion, SERVICE.kind, namespace, name);
    if (cur === undefined) return;
    const deleting = meta(cur).deleting || !isNlbService(cur);
    const logger = "controllers.service";
    const svc = deleting ? cur : this.addFinalizer(cur, SERVICE_FINALIZER);
    const model = buildServiceModel(svc, deleting, this.modelContext());
    const lb = model.lb !== undefined ? this.deploy(model, logger) : await this.deleteStack(model, logger);
    this.reconcileNodeRules();
    const k = `service/${namespace}/${name}`;
    if (lb !== undefined) {
      this.publishHostname(SERVICE, svc, lb.dnsName);
      this.info(logger, "successfully deployed model", { service: { name, namespace } });
      if (model.usesBackendSg) this.backendUsers.set(k, true);
      else await this.releaseBackendSg([k], false, logger);
      return;
    }
    await this.releaseBackendSg([k], true, logger);
    this.removeFinalizer(SERVICE, svc, SERVICE_FINALIZER, logger);
  }

  // ---------------------------------------------------------------- TargetGroupBindings

  /** Every TargetGroupBinding; none while the CRD is not installed. */
  private listTgbs(): KubeObject[] {
    if (this.kube.store.registry.byKind(TGB.apiVersion, TGB.kind) === undefined) return [];
    return this.kube.store.list(TGB.apiVersion, TGB.kind);
  }

  /** `targetGroupBindingReconciler.reconcile`: finalizer, targets, status and event; or the cleanup. */
  private async reconcileTgb(namespace: string, name: string): Promise<void> {
    await Promise.resolve();
    const cur = this.kube.store.get(TGB.apiVersion, TGB.kind, namespace, name);
    if (cur === undefined) return;
    const logger = "controllers.targetGroupBinding";
    const m = meta(cur);
    if (m.deleting) {
      if (!m.finalizers.includes(TGB_FINALIZER)) return;
      try {
        this.cleanupTargets(cur);
      } catch (err) {
        this.event(cur, "Warning", "FailedCleanup", `Failed cleanup due to ${errorText(err)}`);
        throw err;
      }
      this.removeFinalizer(TGB, cur, TGB_FINALIZER, logger);
      return;
    }
    const tgb = this.addFinalizer(cur, TGB_FINALIZER);
    const spec = tgbSpec(tgb);
    if (spec.targetType !== "ip" && spec.targetType !== "instance")
      throw new Error(`targetType is not specified: ${namespace}/${name}`);
    const backend = this.resolveBackend(tgb, spec);
    if (typeof backend === "string") {
      this.event(tgb, "Warning", "BackendNotFound", backend);
      this.cleanupTargets(tgb);
    } else {
      this.syncTargets(tgb, spec.targetGroupARN, backend);
    }
    const generation = tgb.metadata?.generation ?? 1;
    const latest = this.kube.store.get(TGB.apiVersion, TGB.kind, namespace, name);
    const status = (latest?.status ?? {}) as { observedGeneration?: number };
    if (latest !== undefined && status.observedGeneration !== generation) {
      this.kube.store.update(
        { ...latest, status: { ...status, observedGeneration: generation } },
        { subresource: "status" },
      );
    }
    this.event(tgb, "Normal", "SuccessfullyReconciled", "Successfully reconciled");
  }

  /**
   * The targets a binding's Service has now, or the `backend not found: …` text when the Service or
   * its port does not exist (upstream's `ErrNotFound`).
   */
  private resolveBackend(tgb: KubeObject, spec: TgbSpec): { id: string; port: number }[] | string {
    const namespace = meta(tgb).namespace;
    const ref = spec.serviceRef;
    const svc = this.kube.store.get(SERVICE.apiVersion, SERVICE.kind, namespace, ref.name);
    if (svc === undefined) return `backend not found: services "${ref.name}" not found`;
    const svcSpec = (svc.spec ?? {}) as {
      type?: string;
      ports?: { name?: string; port?: number; nodePort?: number }[];
    };
    const port = (svcSpec.ports ?? []).find((p) =>
      typeof ref.port === "number" ? p.port === ref.port : p.name === ref.port,
    );
    if (port === undefined)
      return `backend not found: unable to find port ${String(ref.port)} on service ${namespace}/${ref.name}`;
    if (spec.targetType === "instance") {
      if (svcSpec.type !== "NodePort" && svcSpec.type !== "LoadBalancer")
        throw new Error(`service type must be either 'NodePort' or 'LoadBalancer': ${namespace}/${ref.name}`);
      const nodePort = port.nodePort;
      if (nodePort === undefined) return [];
      return this.kube.store
        .list("v1", "Node")
        .filter(nodeServesTraffic)
        .map((n) => ({ id: instanceIdOf(n), port: nodePort }));
    }
    return this.podEndpoints(namespace, ref.name, port.name ?? "");
  }

  /**
   * Ready pod endpoints of a Service port: from its EndpointSlices (`kubernetes.io/service-name`),
   * else from its Endpoints object; a Service with neither has none.
   */
  private podEndpoints(namespace: string, service: string, portName: string): { id: string; port: number }[] {
    const out: { id: string; port: number }[] = [];
    const portMatches = (name: string | undefined): boolean =>
      portName === "" || name === undefined || name === "" || name === portName;
    const slices = this.kube.store
      .list("discovery.k8s.io/v1", "EndpointSlice", namespace)
      .filter((s) => s.metadata?.labels?.["kubernetes.io/service-name"] === service);
    if (slices.length > 0) {
      for (const slice of slices) {
        const sl = slice as unknown as {
          ports?: { name?: string; port?: number }[];
          endpoints?: { addresses?: string[]; conditions?: { ready?: boolean; terminating?: boolean } }[];
        };
        for (const p of sl.ports ?? []) {
          if (!portMatches(p.name) || p.port === undefined) continue;
          for (const ep of sl.endpoints ?? []) {
            const address = ep.addresses?.[0];
            if (
              address === undefined ||
              ep.conditions?.ready === false ||
              ep.conditions?.terminating === true
            )
              continue;
            out.push({ id: address, port: p.port });
          }
        }
      }
      return out;
    }
    const eps = this.kube.store.get("v1", "Endpoints", namespace, service) as
      | { subsets?: { addresses?: { ip?: string }[]; ports?: { name?: string; port?: number }[] }[] }
      | undefined;
    for (const subset of eps?.subsets ?? []) {
      for (const p of subset.ports ?? []) {
        if (!portMatches(p.name) || p.port === undefined) continue;
        for (const a of subset.addresses ?? []) if (a.ip !== undefined) out.push({ id: a.ip, port: p.port });
      }
    }
    return out;
  }

  /** The group's targets become exactly `want`: deregister the others, register the missing. */
  private syncTargets(tgb: KubeObject, arn: string, want: { id: string; port: number }[]): void {
    const current = this.listTargets(arn);
    const k = (t: { id: string; port: number }): string => `${t.id}:${t.port}`;
    const wanted = new Set(want.map(k));
    const have = new Set(current.map(k));
    const stale = current.filter((t) => !wanted.has(k(t)));
    const missing = [...new Map(want.filter((t) => !have.has(k(t))).map((t) => [k(t), t])).values()];
    if (stale.length > 0) this.targetCall("DeregisterTargets", arn, stale);
    if (missing.length > 0) this.targetCall("RegisterTargets", arn, missing);
    if (stale.length > 0 || missing.length > 0)
      this.info("controllers.targetGroupBinding", "Successful reconcile", {
        tgb: { name: meta(tgb).name, namespace: meta(tgb).namespace },
        registered: missing.length,
        deregistered: stale.length,
      });
  }

  /** `cleanupTargets`: every target of the group goes; a group that is gone counts as clean. */
  private cleanupTargets(tgb: KubeObject): void {
    const arn = tgbSpec(tgb).targetGroupARN;
    if (!this.aws.targetGroups.has(arn)) return;
    const targets = this.listTargets(arn);
    if (targets.length > 0) this.targetCall("DeregisterTargets", arn, targets);
  }

  /** DescribeTargetHealth, failing as aws-sdk-go prints an API error. */
  private listTargets(arn: string): { id: string; port: number }[] {
    try {
      return this.aws.requireTargetGroup(arn).targets.map((t) => ({ id: t.id, port: t.port }));
    } catch (err) {
      if (err instanceof AwsApiError) throw this.sdkError(err);
      throw err;
    }
  }

  /** RegisterTargets / DeregisterTargets under the controller's identity, denied as IAM would. */
  private targetCall(
    action: "RegisterTargets" | "DeregisterTargets",
    arn: string,
    targets: { id: string; port: number }[],
  ): void {
    const params = { targetGroupArn: arn, targets: targets.map((t) => ({ id: t.id, port: t.port })) };
    const resource = { type: "AWS::ElasticLoadBalancingV2::TargetGroup", name: arn };
    const denied = this.options.deniedActions ?? [];
    try {
      if (denied.includes(action) || denied.includes(`elasticloadbalancing:${action}`)) {
        throw new AwsApiError(
          "AccessDenied",
          `User: arn:aws:sts::${this.aws.accountId}:assumed-role/aws-load-balancer-controller/${this.accessKeyId} is not authorized to perform: elasticloadbalancing:${action} on resource: ${arn} because no identity-based policy allows the elasticloadbalancing:${action} action`,
          403,
        );
      }
      if (action === "RegisterTargets") this.aws.registerTargets(arn, targets);
      else this.aws.deregisterTargets(arn, targets);
    } catch (err) {
      if (!(err instanceof AwsApiError)) throw err;
      this.trail("elasticloadbalancing", action, params, resource, err);
      throw this.sdkError(err);
    }
    this.trail("elasticloadbalancing", action, params, resource);
  }

  /** An AWS API error as aws-sdk-go prints it in the controller's logs and events. */
  private sdkError(err: AwsApiError): Error {
    return new Error(
      `${err.code}: ${err.message}\n\tstatus code: ${err.status}, request id: ${this.aws.ids.uuid()}`,
    );
  }

  /**
   * Records an Event on an object as client-go's recorder does: a repeat of the same reason and
   * message on the same object bumps `count` and `lastTimestamp` instead of adding an Event.
   */
  private event(o: KubeObject, type: "Normal" | "Warning", reason: string, message: string): void {
    const m = meta(o);
    const uid = o.metadata?.uid;
    const at = this.now().toISOString();
    const same = this.kube.store.list("v1", "Event", m.namespace).find((e) => {
      const ev = e as unknown as { involvedObject?: { uid?: string }; reason?: string; message?: string };
      return ev.involvedObject?.uid === uid && ev.reason === reason && ev.message === message;
    });
    if (same !== undefined) {
      const count = ((same as unknown as { count?: number }).count ?? 1) + 1;
      this.kube.store.update({ ...same, count, lastTimestamp: at });
      return;
    }
    this.kube.store.create({
      apiVersion: "v1",
      kind: "Event",
      metadata: {
        name: `${m.name}.${randomUUID().replace(/-/g, "").slice(0, 16)}`,
        namespace: m.namespace,
      },
      involvedObject: {
        apiVersion: o.apiVersion,
        kind: o.kind,
        name: m.name,
        namespace: m.namespace,
        uid,
        resourceVersion: o.metadata?.resourceVersion,
      },
      reason,
      message,
      type,
      source: { component: "targetGroupBinding" },
      reportingComponent: "targetGroupBinding",
      reportingInstance: "",
      firstTimestamp: at,
      lastTimestamp: at,
      count: 1,
    });
  }

  // ---------------------------------------------------------------- kube writes

  private addFinalizer(o: KubeObject, finalizer: string): KubeObject {
    const m = meta(o);
    if (m.finalizers.includes(finalizer)) return o;
    return this.kube.store.update({
      ...o,
      metadata: { ...o.metadata, name: m.name, finalizers: [...m.finalizers, finalizer] },
    });
  }

  private removeFinalizer(
    type: { apiVersion: string; kind: string },
    o: KubeObject,
    finalizer: string,
    logger: string,
  ): void {
    const m = meta(o);
    const cur = this.kube.store.get(type.apiVersion, type.kind, m.namespace, m.name);
    if (cur === undefined || !meta(cur).finalizers.includes(finalizer)) return;
    const finalizers = meta(cur).finalizers.filter((f) => f !== finalizer);
    this.kube.store.update({ ...cur, metadata: { ...cur.metadata, name: m.name, finalizers } });
    this.info(logger, `successfully cleaned up ${type.kind.toLowerCase()}`, {
      [type.kind.toLowerCase()]: `${m.namespace}/${m.name}`,
    });
  }

  private publishHostname(type: { apiVersion: string; kind: string }, o: KubeObject, hostname: string): void {
    const m = meta(o);
    const cur = this.kube.store.get(type.apiVersion, type.kind, m.namespace, m.name);
    if (cur === undefined) return;
    const status = (cur as { status?: { loadBalancer?: { ingress?: { hostname?: string }[] } } }).status;
    if (status?.loadBalancer?.ingress?.[0]?.hostname === hostname) return;
    this.kube.store.update(
      { ...cur, status: { ...(cur.status ?? {}), loadBalancer: { ingress: [{ hostname }] } } },
      { subresource: "status" },
    );
  }

  // ---------------------------------------------------------------- AWS: the stack

  private tagged(tags: Tags | undefined, model: StackModel): boolean {
    return tags?.[TAGS.cluster] === this.options.cluster && tags[model.stackTag] === model.stack;
  }

  private stackLoadBalancer(model: StackModel): LoadBalancer | undefined {
    return [...this.aws.loadBalancers.values()].find((x) => {
      const t = this.aws.tags.get(x.arn);
      return this.tagged(t, model) && t?.[model.resourceTag] === "LoadBalancer";
    });
  }

  private stackTargetGroups(model: StackModel): { arn: string; resId: string }[] {
    return [...this.aws.targetGroups.values()]
      .filter((tg) => this.tagged(this.aws.tags.get(tg.arn), model))
      .map((tg) => ({ arn: tg.arn, resId: this.aws.tags.get(tg.arn)?.[model.resourceTag] ?? "" }));
  }

  private stackManagedSg(model: StackModel): string | undefined {
    return [...this.aws.securityGroups.values()].find(
      (g) => this.tagged(g.tags, model) && g.tags[model.resourceTag] === "ManagedLBSecurityGroup",
    )?.id;
  }

  /**
   * Deploys a live stack. Synchronous on purpose: two Deployments never interleave between
   * "exists?" and "create". Certificates are checked first, so a failing model changes nothing.
   */
  private deploy(model: StackModel, logger: string): LoadBalancer {
    const aws = this.aws;
    const lbSpec = model.lb;
    if (lbSpec === undefined) throw new Error("deploy needs a load balancer");
    const existingLb = this.stackLoadBalancer(model);
    const existingListeners = existingLb
      ? [...aws.listeners.values()].filter((l) => l.loadBalancerArn === existingLb.arn)
      : [];
    this.checkCertificates(model, existingListeners);

    const base: Tags = { [TAGS.cluster]: this.options.cluster, [model.stackTag]: model.stack };
    const groups: string[] = [...model.userSgs];
    if (model.managedSg !== undefined) groups.unshift(this.ensureManagedSg(model, base));
    if (model.usesBackendSg) groups.push(this.backendGroup() ?? this.createBackendGroup());

    const tgArns = new Map<string, string>();
    const existingTgs = this.stackTargetGroups(model);
    for (const t of model.targetGroups) {
      const found = existingTgs.find((x) => x.resId === t.resId);
      if (found !== undefined) {
        tgArns.set(t.resId, found.arn);
        continue;
      }
      const tg = aws.createTargetGroup({
        name: t.name,
        protocol: t.protocol,
        port: t.port,
        vpcId: this.options.vpcId,
        targetType: t.targetType,
        tags: { ...base, [model.resourceTag]: t.resId },
      });
      this.trail(
        "elasticloadbalancing",
        "CreateTargetGroup",
        {
          name: t.name,
          protocol: t.protocol,
          port: t.port,
          vpcId: this.options.vpcId,
          targetType: t.targetType,
        },
        { type: "AWS::ElasticLoadBalancingV2::TargetGroup", name: tg.arn },
      );
      this.info(logger, "created targetGroup", { stackID: model.stack, resourceID: t.resId, arn: tg.arn });
      tgArns.set(t.resId, tg.arn);
    }

    let lb = existingLb;
    if (lb === undefined) {
      // A new load balancer always gets a new DNS suffix, even under an old name (docs/incident.md, step 8).
      lb = aws.createLoadBalancer({
        name: lbSpec.name,
        type: lbSpec.type,
        scheme: lbSpec.scheme,
        securityGroups: groups,
        vpcId: this.options.vpcId,
        tags: { ...base, [model.resourceTag]: "LoadBalancer" },
      });
      this.trail(
        "elasticloadbalancing",
        "CreateLoadBalancer",
        { name: lbSpec.name, type: lbSpec.type, scheme: lbSpec.scheme, securityGroups: groups },
        { type: "AWS::ElasticLoadBalancingV2::LoadBalancer", name: lb.arn },
      );
      aws.createLoadBalancerEnis(lb.arn);
      this.info(logger, "created loadBalancer", {
        stackID: model.stack,
        resourceID: "LoadBalancer",
        arn: lb.arn,
      });
    } else if ([...lb.securityGroups].sort().join() !== [...groups].sort().join()) {
      lb.securityGroups = [...groups];
      // ELB moves its own network interfaces to the new groups.
      const description = aws.loadBalancerEniDescription(lb);
      for (const eni of aws.networkInterfaces.values())
        if (eni.description === description) eni.groups = [...groups];
      this.trail(
        "elasticloadbalancing",
        "SetSecurityGroups",
        { loadBalancerArn: lb.arn, securityGroups: groups },
        { type: "AWS::ElasticLoadBalancingV2::LoadBalancer", name: lb.arn },
      );
    }

    this.syncListeners(model, lb, tgArns);

    // Target groups no longer in the model go last, once no listener or rule forwards to them.
    for (const tg of this.stackTargetGroups(model)) {
      if (model.targetGroups.some((t) => t.resId === tg.resId)) continue;
      this.deleteTargetGroup(tg.arn, logger);
    }
    return lb;
  }

  /** The account's certificates: an unknown ARN fails the listener call as ELB does (SDK v1 error text). */
  private checkCertificates(model: StackModel, existing: { port: number; arn: string }[]): void {
    const known = this.options.certificates;
    if (known === undefined) return;
    for (const l of model.listeners) {
      const missing = l.certificates.find((c) => !known.includes(c));
      if (missing === undefined) continue;
      const listener = existing.find((x) => x.port === l.port);
      const requestId = this.aws.ids.uuid();
      const err = new AwsApiError("CertificateNotFound", `Certificate '${missing}' not found`);
      this.trail(
        "elasticloadbalancing",
        listener !== undefined ? "ModifyListener" : "CreateListener",
        listener !== undefined
          ? { listenerArn: listener.arn, certificates: l.certificates.map((c) => ({ certificateArn: c })) }
          : {
              port: l.port,
              protocol: l.protocol,
              certificates: l.certificates.map((c) => ({ certificateArn: c })),
            },
        listener !== undefined
          ? { type: "AWS::ElasticLoadBalancingV2::Listener", name: listener.arn }
          : {
              type: "AWS::ElasticLoadBalancingV2::LoadBalancer",
              name: this.stackLoadBalancer(model)?.arn ?? "",
            },
        err,
      );
      throw new Error(
        `CertificateNotFound: Certificate '${missing}' not found\n\tstatus code: 400, request id: ${requestId}`,
      );
    }
  }

  private ensureManagedSg(model: StackModel, base: Tags): string {
    const spec = model.managedSg;
    if (spec === undefined) throw new Error("no managed security group in the model");
    let id = this.stackManagedSg(model);
    if (id === undefined) {
      const sg = this.aws.createSecurityGroup({
        name: spec.name,
        description: "[k8s] Managed SecurityGroup for LoadBalancer",
        vpcId: this.options.vpcId,
        tags: { ...base, [model.resourceTag]: "ManagedLBSecurityGroup" },
      });
      id = sg.id;
      this.trail(
        "ec2",
        "CreateSecurityGroup",
        { groupName: spec.name, groupDescription: sg.description, vpcId: this.options.vpcId },
        { type: "AWS::EC2::SecurityGroup", name: sg.id },
      );
      this.info("controllers." + model.controller, "created securityGroup", {
        stackID: model.stack,
        resourceID: "ManagedLBSecurityGroup",
        securityGroupID: sg.id,
      });
    }
    const groupId = id;
    const rules = [...this.aws.securityGroupRules.values()].filter(
      (r) => r.groupId === groupId && !r.isEgress,
    );
    for (const p of spec.permissions) {
      if (rules.some((r) => r.ipProtocol === p.protocol && r.fromPort === p.port && r.cidrIpv4 === p.cidr))
        continue;
      this.aws.authorize(groupId, false, [
        { ipProtocol: p.protocol, fromPort: p.port, toPort: p.port, cidrIpv4: p.cidr },
      ]);
      this.trail(
        "ec2",
        "AuthorizeSecurityGroupIngress",
        {
          groupId,
          ipPermissions: {
            items: [
              {
                ipProtocol: p.protocol,
                fromPort: p.port,
                toPort: p.port,
                ipRanges: { items: [{ cidrIp: p.cidr }] },
              },
            ],
          },
        },
        { type: "AWS::EC2::SecurityGroup", name: groupId },
      );
    }
    return groupId;
  }

  /** Listeners and rules to the model; a listener is only touched when what it forwards to or its certificates change. */
  private syncListeners(model: StackModel, lb: LoadBalancer, tgArns: Map<string, string>): void {
    const aws = this.aws;
    const arnOf = (resId: string): string => tgArns.get(resId) ?? "";
    const existing = [...aws.listeners.values()].filter((l) => l.loadBalancerArn === lb.arn);
    for (const l of model.listeners) {
      const rules = l.rules.map((r, i) => ({
        priority: String(i + 1),
        pathPatterns: [...r.paths],
        ...(r.hosts.length > 0 ? { hostHeaders: [...r.hosts] } : {}),
        targetGroupArns: [arnOf(r.tgResId)],
      }));
      const defaultTg = l.defaultTgResId !== undefined ? arnOf(l.defaultTgResId) : undefined;
      const cur = existing.find((x) => x.port === l.port);
      if (cur === undefined) {
        const created = aws.createListener({
          loadBalancerArn: lb.arn,
          port: l.port,
          protocol: l.protocol,
          ...(defaultTg !== undefined ? { defaultTargetGroupArn: defaultTg } : {}),
          rules,
          ...(l.certificates.length > 0 ? { certificates: [...l.certificates] } : {}),
        });
        this.trail(
          "elasticloadbalancing",
          "CreateListener",
          { loadBalancerArn: lb.arn, port: l.port, protocol: l.protocol },
          { type: "AWS::ElasticLoadBalancingV2::Listener", name: created.arn },
        );
        continue;
      }
      // What a listener forwards, and for which hosts: a changed rule host is a change too.
      const forwards = (x: {
        defaultTargetGroupArn?: string;
        rules: { targetGroupArns: string[]; hostHeaders?: string[] }[];
      }): string =>
        [
          ...new Set([
            x.defaultTargetGroupArn ?? "",
            ...x.rules.flatMap((r) =>
              r.targetGroupArns.map((t) => `${(r.hostHeaders ?? []).join("|")}>${t}`),
            ),
          ]),
        ]
          .filter((s) => s !== "")
          .sort()
          .join();
      const wanted = forwards({
        ...(defaultTg !== undefined ? { defaultTargetGroupArn: defaultTg } : {}),
        rules,
      });
      const certsChanged =
        [...(cur.certificates ?? [])].join() !== [...l.certificates].join() && l.certificates.length > 0;
      if (forwards(cur) === wanted && !certsChanged) continue;
      aws.modifyListener(cur.arn, {
        defaultTargetGroupArn: defaultTg,
        ...(l.certificates.length > 0 ? { certificates: [...l.certificates] } : {}),
      });
      this.trail(
        "elasticloadbalancing",
        "ModifyListener",
        { listenerArn: cur.arn, port: l.port, protocol: l.protocol },
        { type: "AWS::ElasticLoadBalancingV2::Listener", name: cur.arn },
      );
      const before = cur.rules.map((r) => r.arn);
      aws.setListenerRules(cur.arn, rules);
      for (const r of cur.rules) {
        if (before.includes(r.arn)) continue;
        this.trail(
          "elasticloadbalancing",
          "CreateRule",
          { listenerArn: cur.arn, priority: Number(r.priority) },
          { type: "AWS::ElasticLoadBalancingV2::ListenerRule", name: r.arn },
        );
      }
      for (const arn of before) {
        if (cur.rules.some((r) => r.arn === arn)) continue;
        this.trail(
          "elasticloadbalancing",
          "DeleteRule",
          { ruleArn: arn },
          { type: "AWS::ElasticLoadBalancingV2::ListenerRule", name: arn },
        );
      }
    }
    for (const cur of existing) {
      if (model.listeners.some((l) => l.port === cur.port)) continue;
      aws.deleteListener(cur.arn);
      this.trail(
        "elasticloadbalancing",
        "DeleteListener",
        { listenerArn: cur.arn },
        { type: "AWS::ElasticLoadBalancingV2::Listener", name: cur.arn },
      );
    }
  }

  private deleteTargetGroup(arn: string, logger: string): void {
    this.info(logger, "deleting targetGroup", { arn });
    this.aws.deleteTargetGroup(arn);
    this.trail(
      "elasticloadbalancing",
      "DeleteTargetGroup",
      { targetGroupArn: arn },
      { type: "AWS::ElasticLoadBalancingV2::TargetGroup", name: arn },
    );
    this.info(logger, "deleted targetGroup", { arn });
  }

  /** The deletion model: load balancer, target groups, node rules, then the managed SG (with retries). */
  private async deleteStack(model: StackModel, logger: string): Promise<undefined> {
    const lb = this.stackLoadBalancer(model);
    if (lb !== undefined) {
      this.info(logger, "deleting loadBalancer", { arn: lb.arn });
      this.aws.deleteLoadBalancer(lb.arn);
      this.trail(
        "elasticloadbalancing",
        "DeleteLoadBalancer",
        { loadBalancerArn: lb.arn },
        { type: "AWS::ElasticLoadBalancingV2::LoadBalancer", name: lb.arn },
      );
      this.info(logger, "deleted loadBalancer", { arn: lb.arn });
    }
    for (const tg of this.stackTargetGroups(model)) this.deleteTargetGroup(tg.arn, logger);
    this.reconcileNodeRules();
    const managed = this.stackManagedSg(model);
    if (managed !== undefined) await this.deleteGroup(managed, this.options.managedSgTimeoutMs, logger);
    return undefined;
  }

  // ---------------------------------------------------------------- the shared backend SG

  private backendGroup(): string | undefined {
    return [...this.aws.securityGroups.values()].find(
      (g) =>
        g.vpcId === this.options.vpcId &&
        g.tags[TAGS.cluster] === this.options.cluster &&
        g.tags[TAGS.backend] === "backend-sg",
    )?.id;
  }

  private createBackendGroup(): string {
    const name = backendSgName(this.options.cluster);
    const sg = this.aws.createSecurityGroup({
      name,
      description: "[k8s] Shared Backend SecurityGroup for LoadBalancer",
      vpcId: this.options.vpcId,
      tags: { [TAGS.cluster]: this.options.cluster, [TAGS.backend]: "backend-sg" },
    });
    this.trail(
      "ec2",
      "CreateSecurityGroup",
      { groupName: name, groupDescription: sg.description, vpcId: this.options.vpcId },
      { type: "AWS::EC2::SecurityGroup", name: sg.id },
    );
    this.info("backend-sg-provider", "created SecurityGroup", { name, id: sg.id });
    return sg.id;
  }

  /**
   * `isBackendSGRequired`: a user recorded as requiring it, or any Ingress/Service holding an LBC
   * finalizer that this process has not classified yet.
   */
  private backendSgRequired(): boolean {
    if ([...this.backendUsers.values()].some((v) => v)) return true;
    const unknown = (prefix: string, objs: KubeObject[], holds: (o: KubeObject) => boolean): boolean =>
      objs.some((o) => holds(o) && !this.backendUsers.has(`${prefix}/${key(o)}`));
    return (
      unknown("ingress", this.kube.store.list(INGRESS.apiVersion, INGRESS.kind), hasIngressFinalizer) ||
      unknown("service", this.kube.store.list(SERVICE.apiVersion, SERVICE.kind), (o) =>
        meta(o).finalizers.includes(SERVICE_FINALIZER),
      )
    );
  }

  /**
   * `Release`: the given users no longer require the backend SG. The group is deleted when nobody
   * requires it — attempted when a stack is finalized or stops using it, not on every resync of a
   * stack that never used it.
   */
  private async releaseBackendSg(
    keys: readonly string[],
    finalizing: boolean,
    logger: string,
  ): Promise<void> {
    const wasUsing = keys.some((k) => this.backendUsers.get(k) === true);
    for (const k of keys) this.backendUsers.set(k, false);
    if (!finalizing && !wasUsing) return;
    if (this.backendSgRequired()) return;
    const backend = this.backendGroup();
    if (backend !== undefined) await this.deleteGroup(backend, this.options.backendSgTimeoutMs, logger);
  }

  /** `RetryImmediateOnError(2s, timeout, isDependencyViolation, DeleteSecurityGroup)`. */
  private async deleteGroup(groupId: string, timeoutMs: number, logger: string): Promise<void> {
    this.info(logger, "deleting securityGroup", { securityGroupID: groupId });
    const deadline = performance.now() + timeoutMs;
    const resource = { type: "AWS::EC2::SecurityGroup", name: groupId };
    for (;;) {
      if (!this.aws.securityGroups.has(groupId)) return;
      try {
        this.aws.deleteSecurityGroup(groupId);
        this.trail("ec2", "DeleteSecurityGroup", { groupId }, resource);
        this.info(logger, "deleted securityGroup", { securityGroupID: groupId });
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

  // ---------------------------------------------------------------- node security group rules

  private nodeSecurityGroup(): string | undefined {
    if (this.options.nodeSecurityGroupId !== undefined) {
      return this.aws.securityGroups.has(this.options.nodeSecurityGroupId)
        ? this.options.nodeSecurityGroupId
        : undefined;
    }
    const tag = `kubernetes.io/cluster/${this.options.cluster}`;
    const candidates = [...this.aws.securityGroups.values()].filter(
      (g) => g.vpcId === this.options.vpcId && (g.tags[tag] === "owned" || g.tags[tag] === "shared"),
    );
    return candidates.length === 1 ? candidates[0]?.id : undefined;
  }

  /**
   * The node SG lets the backend SG reach every target port of the cluster's target groups whose
   * load balancer carries the backend SG: one tcp rule over the min–max port (restricted rules).
   */
  private reconcileNodeRules(): void {
    const nodeSg = this.nodeSecurityGroup();
    const backend = this.backendGroup();
    if (nodeSg === undefined) return;
    const aws = this.aws;
    const ports: number[] = [];
    if (backend !== undefined) {
      for (const tg of aws.targetGroups.values()) {
        if (aws.tags.get(tg.arn)?.[TAGS.cluster] !== this.options.cluster) continue;
        const lbs = aws.loadBalancersOfTargetGroup(tg.arn).map((arn) => aws.loadBalancers.get(arn));
        if (lbs.some((lb) => lb?.securityGroups.includes(backend) === true)) ports.push(tg.port);
      }
    }
    const labelled = [...aws.securityGroupRules.values()].filter(
      (r) => r.groupId === nodeSg && !r.isEgress && r.description === SHARED_RULE_DESCRIPTION,
    );
    if (ports.length === 0 && !this.nodeSgTracked) return;
    const want =
      ports.length > 0 && backend !== undefined
        ? {
            ipProtocol: "tcp",
            fromPort: Math.min(...ports),
            toPort: Math.max(...ports),
            referencedGroupId: backend,
          }
        : undefined;
    if (want !== undefined) this.nodeSgTracked = true;
    const matches = (r: (typeof labelled)[number]): boolean =>
      want !== undefined &&
      r.ipProtocol === want.ipProtocol &&
      r.fromPort === want.fromPort &&
      r.toPort === want.toPort &&
      r.referencedGroupId === want.referencedGroupId;
    const permission = (r: {
      ipProtocol: string;
      fromPort: number;
      toPort: number;
      referencedGroupId?: string;
    }) => ({
      items: [
        {
          ipProtocol: r.ipProtocol,
          fromPort: r.fromPort,
          toPort: r.toPort,
          groups: { items: [{ groupId: r.referencedGroupId, description: SHARED_RULE_DESCRIPTION }] },
        },
      ],
    });
    for (const r of labelled) {
      if (matches(r)) continue;
      aws.revoke(nodeSg, false, { ruleIds: [r.id] });
      this.trail(
        "ec2",
        "RevokeSecurityGroupIngress",
        { groupId: nodeSg, ipPermissions: permission(r) },
        { type: "AWS::EC2::SecurityGroup", name: nodeSg },
      );
    }
    if (want !== undefined && !labelled.some(matches)) {
      aws.authorize(nodeSg, false, [{ ...want, description: SHARED_RULE_DESCRIPTION }]);
      this.trail(
        "ec2",
        "AuthorizeSecurityGroupIngress",
        { groupId: nodeSg, ipPermissions: permission(want) },
        { type: "AWS::EC2::SecurityGroup", name: nodeSg },
      );
    }
  }
}
