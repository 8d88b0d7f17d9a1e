/**
 * One scenario world (kube + AWS + the simulated Load Balancer Controller on one clock) with SDK
 * clients pointed at it, for the tests that run the product's AWS reads against it.
 */
import { createAwsClients, destroyAwsClients, type AwsClients } from "../../../src/aws/clients.js";
import type { KubeObject } from "../../sim/kube/index.js";
import { eventually } from "../../helpers/eventually.js";
import { startWorld, type World } from "../../sim/world.js";
import { recreateSeed } from "../../sim/argo-sync.js";

// Argo CD's re-sync (docs/incident.md, step 8) is simulator code: the sandbox runs it too.
export { recreateSeed, seedIngress, untilProvisioned } from "../../sim/argo-sync.js";

/** Controller periods compressed for tests (real: 2 s retry, 2 min timeouts, 10 s requeue). */
export const FAST_LBC = {
  retryIntervalMs: 20,
  backendSgTimeoutMs: 300,
  managedSgTimeoutMs: 300,
  requeueMs: 200,
};

export interface AwsWorld {
  readonly w: World;
  readonly c: AwsClients;
  close(): Promise<void>;
}

/** Starts `test/fixtures/scenarios/<file>` with the controller running and clients for its AWS. */
export async function openAwsWorld(file: string): Promise<AwsWorld> {
  const w = await startWorld({
    scenario: `test/fixtures/scenarios/${file}`,
    lbc: FAST_LBC,
    controllerIntervalMs: 50,
  });
  const c = createAwsClients({
    region: "ap-northeast-2",
    endpoint: w.aws.url,
    credentials: { accessKeyId: "AKIAUNSTUCKTEST00001", secretAccessKey: "x" },
    maxAttempts: 1,
  });
  return {
    w,
    c,
    close: async () => {
      destroyAwsClients(c);
      await w.stop();
    },
  };
}

/** docs/incident.md, step 7, by hand: the seed Ingress's finalizer comes off; resolves once myapp is gone. */
export async function forceRemoveSeedFinalizer(w: World): Promise<void> {
  const stuck = w.kube.store.get(
    "networking.k8s.io/v1",
    "Ingress",
    "myapp",
    "myapp-worker-ingress",
  ) as KubeObject;
  w.kube.store.update({
    ...stuck,
    metadata: { ...stuck.metadata, name: "myapp-worker-ingress", finalizers: [] },
  });
  await eventually(
    () => (w.kube.store.get("v1", "Namespace", undefined, "myapp") === undefined ? true : undefined),
    20_000,
  );
}

/**
 * Recovery as in docs/incident.md, steps 7–8: the finalizer comes off, the namespace goes, Argo
 * re-creates it.
 */
export async function recoverSeed(w: World, ingresses: readonly string[]): Promise<void> {
  await forceRemoveSeedFinalizer(w);
  await recreateSeed(w, ingresses);
}
