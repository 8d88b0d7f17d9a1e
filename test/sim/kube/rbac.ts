/**
 * The RBAC authorizer (k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac), over the ClusterRoles,
 * Roles and their bindings held in the store, as kube-apiserver runs it with
 * `--authorization-mode=RBAC`:
 *
 * - A request is allowed when some binding whose subjects include the user grants a rule that
 *   covers it. There is no deny: rules only add.
 * - ClusterRoleBindings apply everywhere; a RoleBinding only to requests in its own namespace,
 *   whether it refers to a Role there or to a ClusterRole.
 * - Subjects: `User` by name, `Group` by name, `ServiceAccount` by name and namespace. A
 *   ServiceAccount's user is `system:serviceaccount:<ns>:<name>`, in the groups
 *   `system:serviceaccounts`, `system:serviceaccounts:<ns>` and `system:authenticated`.
 * - A rule covers a request when its verbs hold the verb (or `*`), its apiGroups the group (or
 *   `*`), its resources the resource — `<resource>/<subresource>` for a subresource, `*` for
 *   every resource and subresource, `*` then `/<subresource>` for that subresource of any resource —
 *   and its resourceNames, when it has any, the request's object name (a request without a name, a
 *   `list` or a `create`, is never covered by a rule with resourceNames).
 * - Members of `system:masters` are allowed everything before RBAC is consulted; the simulator's
 *   `superusers` stand for them. Discovery and `/version` are open to every authenticated user
 *   (the `system:discovery` and `system:public-info-viewer` bindings of a real cluster).
 * - Aggregated ClusterRoles (`aggregationRule`) are not assembled: their rules are used as stored.
 */
import { isRecord, type KubeObject } from "./object.js";
import type { SimStore } from "./store.js";

export interface RbacRequest {
  readonly user: string;
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string | undefined;
  readonly namespace?: string | undefined;
  readonly name?: string | undefined;
}

const RBAC = "rbac.authorization.k8s.io/v1";

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

/** The groups kube-apiserver's authenticators put a user in. */
export function groupsOf(user: string): string[] {
  const groups = user === "system:anonymous" ? ["system:unauthenticated"] : ["system:authenticated"];
  const sa = /^system:serviceaccount:([^:]+):[^:]+$/.exec(user);
  if (sa) groups.push("system:serviceaccounts", `system:serviceaccounts:${sa[1] ?? ""}`);
  return groups;
}

function subjectMatches(subject: unknown, user: string, groups: readonly string[]): boolean {
  if (!isRecord(subject)) return false;
  const { kind, name, namespace } = subject;
  if (typeof name !== "string") return false;
  if (kind === "User") return name === user;
  if (kind === "Group") return groups.includes(name);
  if (kind === "ServiceAccount")
    return typeof namespace === "string" && user === `system:serviceaccount:${namespace}:${name}`;
  return false;
}

function ruleCovers(rule: unknown, r: RbacRequest): boolean {
  if (!isRecord(rule)) return false;
  const verbs = strings(rule.verbs);
  if (!verbs.includes("*") && !verbs.includes(r.verb)) return false;
  const groups = strings(rule.apiGroups);
  if (!groups.includes("*") && !groups.includes(r.group)) return false;
  const resources = strings(rule.resources);
  const wanted = r.subresource !== undefined ? `${r.resource}/${r.subresource}` : r.resource;
  const resourceOk =
    resources.includes("*") ||
    resources.includes(wanted) ||
    (r.subresource !== undefined && resources.includes(`*/${r.subresource}`));
  if (!resourceOk) return false;
  const names = strings(rule.resourceNames);
  return names.length === 0 || (r.name !== undefined && names.includes(r.name));
}

function roleRules(store: SimStore, ref: unknown, namespace: string | undefined): unknown[] {
  if (!isRecord(ref) || typeof ref.name !== "string") return [];
  const role: KubeObject | undefined =
    ref.kind === "ClusterRole"
      ? store.get(RBAC, "ClusterRole", undefined, ref.name)
      : ref.kind === "Role" && namespace !== undefined
        ? store.get(RBAC, "Role", namespace, ref.name)
        : undefined;
  return Array.isArray(role?.rules) ? role.rules : [];
}

/** Whether RBAC allows the request (resource requests only). */
export function rbacAllows(store: SimStore, r: RbacRequest): boolean {
  const groups = groupsOf(r.user);
  const bound = (b: KubeObject): boolean =>
    Array.isArray(b.subjects) && b.subjects.some((s) => subjectMatches(s, r.user, groups));
  for (const b of store.list(RBAC, "ClusterRoleBinding")) {
    if (bound(b) && roleRules(store, b.roleRef, undefined).some((rule) => ruleCovers(rule, r))) return true;
  }
  if (r.namespace !== undefined) {
    for (const b of store.list(RBAC, "RoleBinding", r.namespace)) {
      if (bound(b) && roleRules(store, b.roleRef, r.namespace).some((rule) => ruleCovers(rule, r)))
        return true;
    }
  }
  return false;
}
