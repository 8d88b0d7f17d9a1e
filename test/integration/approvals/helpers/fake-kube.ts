/**
 * A small in-memory `KubePort` that keeps the API server semantics the executor relies on:
 * every write bumps `resourceVersion`; a finalizer patch is guarded like a JSON patch with `test`
 * operations (resourceVersion and the exact finalizer list) and fails with `Stale` otherwise; an
 * object being deleted disappears once its last finalizer is gone. It counts the patches that
 * reached it, so tests can assert "exactly one".
 *
 * Stand-in until the wire-level simulator (`test/sim/kube`) and the real adapter can be used.
 */
import { ErrorCode, UnstuckError } from "../../../../src/errors.js";
import type { KubePort, WriteContext } from "../../../../src/kube/port.js";
import type { NamespaceSnapshot, ObjectSnapshot, ResourceType } from "../../../../src/kube/types.js";

export const INGRESS: ResourceType = {
  group: "networking.k8s.io",
  version: "v1",
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  resource: "ingresses",
  namespaced: true,
  verbs: ["get", "list", "patch", "delete"],
};

export interface AppliedPatch {
  readonly namespace: string;
  readonly name: string;
  readonly removed: readonly string[];
  readonly resourceVersionBefore: string;
  /** The approval request the write was made for, as the executor named it. */
  readonly requestId?: string;
}

type Method = "getObject" | "getNamespace" | "removeFinalizers";

export class FakeKube implements KubePort {
  private rv = 1000;
  private readonly objects = new Map<string, ObjectSnapshot>();
  private readonly namespaces = new Map<string, NamespaceSnapshot>();
  private readonly faults: { method: Method; error: UnstuckError }[] = [];
  /** Patches the "API server" accepted. */
  public readonly applied: AppliedPatch[] = [];
  /** Patch requests received, accepted or not. */
  public patchRequests = 0;

  private key(type: ResourceType, ns: string, name: string): string {
    return `${type.resource}.${type.group}/${ns}/${name}`;
  }

  private nextRv(): string {
    this.rv += 1;
    return String(this.rv);
  }

  /** Create or overwrite an object; returns it with a fresh resourceVersion. */
  public putObject(
    type: ResourceType,
    ns: string,
    name: string,
    fields: { finalizers: readonly string[]; deleting?: boolean },
  ): ObjectSnapshot {
    const obj: ObjectSnapshot = {
      apiVersion: type.apiVersion,
      kind: type.kind,
      resource: type.resource,
      namespace: ns,
      name,
      uid: `uid-${name}`,
      resourceVersion: this.nextRv(),
      finalizers: [...fields.finalizers],
      labels: {},
      annotations: {},
      ownerReferences: [],
      ...(fields.deleting ? { deletionTimestamp: "2026-02-12T08:39:00Z" } : {}),
    };
    this.objects.set(this.key(type, ns, name), obj);
    return obj;
  }

  /** Someone else edits the object (e.g. a controller adds a finalizer): resourceVersion moves. */
  public edit(type: ResourceType, ns: string, name: string, finalizers?: readonly string[]): ObjectSnapshot {
    const cur = this.objects.get(this.key(type, ns, name));
    if (!cur) throw new Error("no such object");
    const next = { ...cur, resourceVersion: this.nextRv(), finalizers: [...(finalizers ?? cur.finalizers)] };
    this.objects.set(this.key(type, ns, name), next);
    return next;
  }

  public deleteObject(type: ResourceType, ns: string, name: string): void {
    this.objects.delete(this.key(type, ns, name));
  }

  public peek(type: ResourceType, ns: string, name: string): ObjectSnapshot | undefined {
    return this.objects.get(this.key(type, ns, name));
  }

  public putNamespace(name: string, phase = "Terminating"): void {
    this.namespaces.set(name, {
      name,
      phase,
      specFinalizers: ["kubernetes"],
      finalizers: [],
      conditions: [],
      labels: {},
      annotations: {},
    });
  }

  public deleteNamespace(name: string): void {
    this.namespaces.delete(name);
  }

  /** The next call of `method` fails with `error` (one fault per call, in order). */
  public failNext(method: Method, error: UnstuckError): void {
    this.faults.push({ method, error });
  }

  private fault(method: Method): void {
    const i = this.faults.findIndex((f) => f.method === method);
    if (i >= 0) {
      const [f] = this.faults.splice(i, 1);
      if (f) throw f.error;
    }
  }

  public getNamespace(name: string): Promise<NamespaceSnapshot | null> {
    this.fault("getNamespace");
    return Promise.resolve(this.namespaces.get(name) ?? null);
  }

  public getObject(type: ResourceType, ns: string, name: string): Promise<ObjectSnapshot | null> {
    this.fault("getObject");
    return Promise.resolve(this.objects.get(this.key(type, ns, name)) ?? null);
  }

  public removeFinalizers(
    type: ResourceType,
    ns: string,
    name: string,
    precondition: { readonly resourceVersion: string; readonly finalizers: readonly string[] },
    remove: readonly string[],
    write?: WriteContext,
  ): Promise<ObjectSnapshot> {
    this.patchRequests += 1;
    this.fault("removeFinalizers");
    const k = this.key(type, ns, name);
    const cur = this.objects.get(k);
    if (!cur)
      return Promise.reject(new UnstuckError(ErrorCode.NotFound, `${type.kind} ${ns}/${name} not found`));
    const same =
      cur.resourceVersion === precondition.resourceVersion &&
      JSON.stringify(cur.finalizers) === JSON.stringify(precondition.finalizers);
    if (!same) {
      return Promise.reject(
        new UnstuckError(ErrorCode.Stale, `${type.kind} ${ns}/${name} changed; the test operation failed`, {
          status: 422,
        }),
      );
    }
    const finalizers = cur.finalizers.filter((f) => !remove.includes(f));
    const next: ObjectSnapshot = { ...cur, resourceVersion: this.nextRv(), finalizers };
    this.applied.push({
      namespace: ns,
      name,
      removed: [...remove],
      resourceVersionBefore: precondition.resourceVersion,
      ...(write !== undefined ? { requestId: write.requestId } : {}),
    });
    if (finalizers.length === 0 && cur.deletionTimestamp) this.objects.delete(k);
    else this.objects.set(k, next);
    return Promise.resolve(next);
  }

  private unsupported(): Promise<never> {
    return Promise.reject(new UnstuckError(ErrorCode.Internal, "not supported by FakeKube"));
  }

  public discover = () => this.unsupported();
  public listObjects = () => this.unsupported();
  public listDeployments = () => this.unsupported();
  public listPods = () => this.unsupported();
  public podLog = () => this.unsupported();
  public listEvents = () => this.unsupported();
  public listApiServices = () => this.unsupported();
  public listArgoApplications = () => this.unsupported();
  public getServiceEndpoints = () => this.unsupported();
  public listAdmissionWebhooks = () => this.unsupported();
  public serviceExists = () => this.unsupported();
  public getNode = () => this.unsupported();
  public listPodPlacements = () => this.unsupported();
  public annotateNamespace = () => this.unsupported();
  public listNamespaces = () => this.unsupported();
  public removeNamespaceAnnotation = () => this.unsupported();
  public close = () => Promise.resolve();
}
