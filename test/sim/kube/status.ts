/**
 * Kubernetes `Status` error bodies, worded exactly as the real API server words them, because
 * kubectl prints `message` verbatim and the bot's adapters map `reason`/`code`.
 */
import type { ResourceDef } from "./registry.js";

/** A `metav1.StatusCause`. */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** A `metav1.StatusDetails`. */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** A failure the simulator answers with a `Status` body and HTTP `code`. */
export class KubeApiError extends Error {
  public readonly code: number;
  public readonly reason: string;
  public readonly details: StatusDetails | undefined;

  public constructor(code: number, reason: string, message: string, details?: StatusDetails) {
    super(message);
    this.name = "KubeApiError";
    this.code = code;
    this.reason = reason;
    this.details = details;
  }

  /** The wire body. */
  public toStatus(): Record<string, unknown> {
    return statusBody(this.code, this.reason, this.message, this.details);
  }
}

export function statusBody(
  code: number,
  reason: string,
  message: string,
  details?: StatusDetails,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason,
  };
  if (details !== undefined) body.details = stripEmpty(details);
  body.code = code;
  return body;
}

/** Go's `omitempty`: drop empty strings so `group: ""` never appears for the core group. */
function stripEmpty(details: StatusDetails): StatusDetails {
  const out: StatusDetails = {};
  for (const [k, v] of Object.entries(details)) {
    if (v === undefined || v === "" || (Array.isArray(v) && v.length === 0)) continue;
    (out as Record<string, unknown>)[k] = v;
  }
  return out;
}

/** `ingresses.networking.k8s.io` or `pods` (GroupResource.String()). */
export function groupResource(def: Pick<ResourceDef, "group" | "resource">): string {
  return def.group === "" ? def.resource : `${def.resource}.${def.group}`;
}

/** `Ingress.networking.k8s.io` or `Pod` (GroupKind.String()), used by Invalid errors. */
export function groupKind(def: Pick<ResourceDef, "group" | "kind">): string {
  return def.group === "" ? def.kind : `${def.kind}.${def.group}`;
}

export function notFound(def: Pick<ResourceDef, "group" | "resource">, name: string): KubeApiError {
  return new KubeApiError(404, "NotFound", `${groupResource(def)} "${name}" not found`, {
    name,
    group: def.group,
    kind: def.resource,
  });
}

export function alreadyExists(def: Pick<ResourceDef, "group" | "resource">, name: string): KubeApiError {
  return new KubeApiError(409, "AlreadyExists", `${groupResource(def)} "${name}" already exists`, {
    name,
    group: def.group,
    kind: def.resource,
  });
}

export function conflict(
  def: Pick<ResourceDef, "group" | "resource">,
  name: string,
  why?: string,
): KubeApiError {
  return new KubeApiError(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${groupResource(def)} "${name}": ${
      why ?? "the object has been modified; please apply your changes to the latest version and try again"
    }`,
    { name, group: def.group, kind: def.resource },
  );
}

/** A field error, as `field.Invalid`/`field.Required` render it. */
export interface FieldError {
  field: string;
  type: "Invalid" | "Required" | "Forbidden" | "TooLong";
  value?: string;
  detail: string;
}

function fieldErrorText(e: FieldError): string {
  switch (e.type) {
    case "Invalid":
      return `Invalid value: ${JSON.stringify(e.value ?? "")}: ${e.detail}`;
    case "Required":
      return `Required value: ${e.detail}`;
    case "Forbidden":
      return `Forbidden: ${e.detail}`;
    case "TooLong":
      return `Too long: ${e.detail}`;
  }
}

const causeReason = {
  Invalid: "FieldValueInvalid",
  Required: "FieldValueRequired",
  Forbidden: "FieldValueForbidden",
  TooLong: "FieldValueTooLong",
};

export function invalid(
  def: Pick<ResourceDef, "group" | "kind">,
  name: string,
  errors: FieldError[],
): KubeApiError {
  const parts = errors.map((e) => `${e.field}: ${fieldErrorText(e)}`);
  const joined = parts.length === 1 ? (parts[0] ?? "") : `[${parts.join(", ")}]`;
  return new KubeApiError(422, "Invalid", `${groupKind(def)} "${name}" is invalid: ${joined}`, {
    name,
    group: def.group,
    kind: def.kind,
    causes: errors.map((e) => ({ reason: causeReason[e.type], message: fieldErrorText(e), field: e.field })),
  });
}

export function badRequest(message: string): KubeApiError {
  return new KubeApiError(400, "BadRequest", message);
}

/**
 * What the patch handler's `errors.NewGenericServerResponse(422, "", {}, "", err, 0, false)` yields
 * when a JSON patch does not apply (a failed `test`, a missing path): a fixed sentence and empty
 * details. The json-patch error (`applyError`) is not sent, as a real API server does not send it
 * (it is kept on the error for the simulator's own log).
 */
export function unprocessable(applyError: string): KubeApiError {
  const err = new KubeApiError(
    422,
    "Invalid",
    "the server rejected our request due to an error in our request",
    {},
  );
  err.cause = applyError;
  return err;
}

export function internalError(cause: string): KubeApiError {
  return new KubeApiError(500, "InternalError", `Internal error occurred: ${cause}`, {
    causes: [{ message: cause }],
  });
}

export function tooManyRequests(retryAfterSeconds: number): KubeApiError {
  return new KubeApiError(429, "TooManyRequests", "Too many requests, please try again later.", {
    retryAfterSeconds,
  });
}

export function methodNotSupported(def: Pick<ResourceDef, "group" | "resource">, verb: string): KubeApiError {
  return new KubeApiError(
    405,
    "MethodNotAllowed",
    `${verb} is not supported on resources of kind "${groupResource(def)}"`,
    {
      group: def.group,
      kind: def.resource,
    },
  );
}

/**
 * The RBAC authorizer's refusal, e.g. `ingresses.networking.k8s.io is forbidden: User "unstuck"
 * cannot list resource "ingresses" in API group "networking.k8s.io" in the namespace "myapp"`.
 */
export function rbacForbidden(args: {
  user: string;
  verb: string;
  def: Pick<ResourceDef, "group" | "resource">;
  subresource?: string;
  namespace?: string;
  name?: string;
}): KubeApiError {
  const { user, verb, def, subresource, namespace, name } = args;
  const gr = groupResource(def);
  const subject = name !== undefined && name !== "" ? `${gr} "${name}"` : gr;
  const resource =
    subresource !== undefined && subresource !== "" ? `${def.resource}/${subresource}` : def.resource;
  const scope =
    namespace !== undefined && namespace !== "" ? `in the namespace "${namespace}"` : "at the cluster scope";
  return new KubeApiError(
    403,
    "Forbidden",
    `${subject} is forbidden: User "${user}" cannot ${verb} resource "${resource}" in API group "${def.group}" ${scope}`,
    { name: name ?? "", group: def.group, kind: def.resource },
  );
}

export function namespaceTerminating(
  def: Pick<ResourceDef, "group" | "resource">,
  name: string,
  namespace: string,
) {
  const why = `unable to create new content in namespace ${namespace} because it is being terminated`;
  return new KubeApiError(403, "Forbidden", `${groupResource(def)} "${name}" is forbidden: ${why}`, {
    name,
    group: def.group,
    kind: def.resource,
    causes: [{ reason: "NamespaceTerminating", message: why, field: "metadata.namespace" }],
  });
}
