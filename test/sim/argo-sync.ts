/**
 * Argo CD re-syncing the seed's application after namespace myapp is gone (docs/incident.md, step 8): the
 * namespace and its Ingresses come back from Git, and the simulated Load Balancer Controller builds
 * each a new ALB with a new DNS name. Route 53 and CloudFront are left as they were: CloudFront's
 * origin still names the deleted ALB (step 9). Used by the sandbox (its `argo sync` line and the
 * console's button) and by the tests. Simulator code: it imports nothing from the product.
 */
import type { KubeObject } from "./kube/index.js";
import { eventually } from "./eventually.js";
import type { World } from "./world.js";

/** The namespace Argo CD manages in the seed incident. */
export const SEED_NAMESPACE = "myapp";

/** The Ingresses Argo CD re-creates by default: the one whose ALB test.example.com's origin named. */
export const SEED_SYNCED_INGRESSES: readonly string[] = ["myapp-worker-ingress"];

/**
 * The hosts each of the seed's Ingresses serves (its rules), as its manifest in Git says: the worker
 * also answers test.example.com, whose CloudFront distribution forwards the viewer's Host to it.
 */
const SEED_HOSTS: Readonly<Record<string, readonly string[]>> = {
  "myapp-worker-ingress": ["worker.example.com", "test.example.com"],
  "myapp-api-ingress": ["api.example.com"],
};

const INGRESS_API = "networking.k8s.io/v1";

/** An internet-facing ALB Ingress in myapp, as Argo CD re-creates them after the incident. */
export function seedIngress(name: string): KubeObject {
  const hosts: readonly (string | undefined)[] = SEED_HOSTS[name] ?? [undefined];
  return {
    apiVersion: INGRESS_API,
    kind: "Ingress",
    metadata: {
      name,
      namespace: SEED_NAMESPACE,
      annotations: { "alb.ingress.kubernetes.io/scheme": "internet-facing" },
    },
    spec: {
      ingressClassName: "alb",
      rules: hosts.map((host) => ({
        ...(host !== undefined ? { host } : {}),
        http: {
          paths: [{ path: "/", pathType: "Prefix", backend: { service: { name, port: { number: 80 } } } }],
        },
      })),
    },
  };
}

/** The load balancer DNS name the controller wrote into an Ingress's status, if any yet. */
function ingressHostname(w: World, name: string): string | undefined {
  const ing = w.kube.store.get(INGRESS_API, "Ingress", SEED_NAMESPACE, name) as
    { status?: { loadBalancer?: { ingress?: { hostname?: string }[] } } } | undefined;
  const first = ing?.status?.loadBalancer?.ingress?.[0];
  return first === undefined ? undefined : (first.hostname ?? "");
}

/** Until the controller has given each named Ingress of myapp a load balancer. */
export async function untilProvisioned(
  w: World,
  ingresses: readonly string[],
  timeoutMs = 20_000,
): Promise<void> {
  await eventually(
    () => (ingresses.every((n) => ingressHostname(w, n) !== undefined) ? true : undefined),
    timeoutMs,
    `the controller provisioning ${ingresses.join(", ")}`,
  );
}

/**
 * docs/incident.md, step 8: Argo CD re-creates namespace myapp and its Ingresses; the controller
 * builds ALBs.
 */
export async function recreateSeed(
  w: World,
  ingresses: readonly string[],
  timeoutMs = 20_000,
): Promise<void> {
  w.kube.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: SEED_NAMESPACE } });
  for (const n of ingresses) w.kube.store.create(seedIngress(n));
  await untilProvisioned(w, ingresses, timeoutMs);
}

/** What an Argo CD sync of the seed did, in one line per fact, for a terminal or a console toast. */
export interface ArgoSyncResult {
  /** false: nothing was synced (the namespace still exists); `lines` say why. */
  readonly synced: boolean;
  readonly lines: readonly string[];
}

/** Options of {@link argoSyncSeed}. */
export interface ArgoSyncOptions {
  /** What Argo CD re-creates (default {@link SEED_SYNCED_INGRESSES}). */
  readonly ingresses?: readonly string[];
  /** How long the controller may take to give the new Ingresses their ALBs (default 60 s). */
  readonly provisionTimeoutMs?: number;
}

/**
 * The sandbox's `argo sync myapp`: refuses while the namespace still exists (Terminating, or already
 * re-created), otherwise re-creates it with its Ingresses and reports each new ALB.
 */
export async function argoSyncSeed(w: World, options: ArgoSyncOptions = {}): Promise<ArgoSyncResult> {
  const ingresses = options.ingresses ?? SEED_SYNCED_INGRESSES;
  const ns = w.kube.store.get("v1", "Namespace", undefined, SEED_NAMESPACE);
  if (ns !== undefined) {
    const terminating = ns.metadata?.deletionTimestamp !== undefined;
    return {
      synced: false,
      lines: [
        terminating
          ? `Argo CD: namespace ${SEED_NAMESPACE} is still Terminating; nothing to sync until it is gone.`
          : `Argo CD: namespace ${SEED_NAMESPACE} exists; the application is already synced.`,
      ],
    };
  }
  try {
    await recreateSeed(w, ingresses, options.provisionTimeoutMs ?? 60_000);
  } catch {
    // Not provisioned in time: the objects exist; say which Ingresses have no ALB yet.
  }
  return {
    synced: true,
    lines: [
      `Argo CD synced ${SEED_NAMESPACE}: namespace ${SEED_NAMESPACE} and ${ingresses
        .map((n) => `Ingress ${n}`)
        .join(", ")} re-created.`,
      ...ingresses.map((n) => {
        const dns = ingressHostname(w, n);
        return dns === undefined
          ? `Load Balancer Controller: ${n} has no load balancer yet (still reconciling).`
          : `Load Balancer Controller: ${n} → new ALB ${dns}`;
      }),
    ],
  };
}
