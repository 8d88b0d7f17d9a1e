/**
 * The words of a diagnosis: its typed cause chain and remedies (`src/diagnosis`) as plain sentences,
 * shared by the terminal text and the Slack card. Plain text with `code` spans only; Slack escapes
 * the whole sentence (nothing here is the bot's own `<…>` markup), the terminal prints it as is.
 */
import type {
  Blocker,
  CauseLink,
  ContentScan,
  DiagnosisRemedy,
  DiscoveryFailureFinding,
  ForbiddenType,
  NamespaceDiagnosis,
  NodeRef,
  ObjectRef,
  ScanFallback,
  WebhookRef,
} from "../diagnosis/types.js";
import { plural } from "../util/format.js";

export interface ProseOptions {
  /** The slash command as configured (`UNSTUCK_COMMAND`), named in steps that run one. */
  readonly command?: string;
  /**
   * Where the step can be a button (the Slack card): the forced removal is then offered as the
   * *Request finalizer removal* button, and the command is named as the other way.
   */
  readonly buttons?: boolean;
}

const DEFAULT_COMMAND = "/unstuck";

export function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

export function objectName(o: Pick<ObjectRef, "kind" | "namespace" | "name">): string {
  return `${o.kind} ${o.namespace}/${o.name}`;
}

/** The root of the cause chain: the most specific link (what holds what). */
export function rootCause(d: Pick<NamespaceDiagnosis, "cause">): CauseLink | undefined {
  const order: CauseLink["kind"][] = [
    "delete-refused-by-webhook",
    "pods-on-lost-node",
    "delete-refused",
    "claim-in-use",
    "namespace-finalizer",
    "security-group-held",
    "group-member-failing",
    "controller-missing",
    "discovery-failing",
    "controller-error",
    "finalizers-remain",
    "content-unread",
    "namespace-finalizers",
    "content-deleting",
    "namespace-missing",
    "not-deleting",
  ];
  for (const kind of order) {
    const c = d.cause.find((x) => x.kind === kind);
    if (c) return c;
  }
  return undefined;
}

/**
 * The cause in one sentence, most specific first: "the security group sg-… (k8s-traffic-…) is held
 * by network interface eni-… of the deleted load balancer k8s-…, so Ingress myapp/x keeps its finalizer".
 */
export function causeSentence(d: Pick<NamespaceDiagnosis, "cause" | "blockers">): string {
  const c = rootCause(d);
  if (!c) return "nothing blocks it";
  switch (c.kind) {
    case "security-group-held": {
      const h = c.holder;
      const holder =
        h.type === "network-interface"
          ? `network interface ${h.id}${h.loadBalancer !== undefined ? ` of the deleted load balancer ${h.loadBalancer}` : ""}`
          : `rule ${h.id} in ${h.groupId} (${h.groupName})`;
      return `security group ${c.groupId} (${c.groupName}) is held by ${holder}, so ${objectName(c.object)} keeps its finalizer`;
    }
    case "group-member-failing":
      return `IngressGroup ${c.group} fails to build because of ${c.culprits.join(", ")}, so ${objectName(c.object)} keeps its finalizer`;
    case "controller-missing":
      return `${c.controller} is not installed, so nothing will ever remove ${c.finalizer} from ${objectName(c.object)}`;
    case "discovery-failing":
      return `API discovery fails for ${c.groupVersions.join(", ")}, so the namespace controller can never confirm the namespace is empty`;
    case "controller-error": {
      const held = d.cause.find((x) => x.kind === "finalizers-remain");
      const fin =
        held?.kind === "finalizers-remain"
          ? held.objects.find((o) => o.namespace === c.object.namespace && o.name === c.object.name)
              ?.finalizers
          : undefined;
      const keeps = `${objectName(c.object)} keeps its finalizer${fin ? ` ${fin.join(", ")}` : ""}`;
      // The controller is there and running: its own error is the cause, said first.
      if (c.running === true && c.controller !== undefined)
        return `${controllerFailing(c, 300)}, so ${keeps}`;
      return `${keeps}: the controller fails with "${truncate(c.text, 160)}"`;
    }
    case "finalizers-remain": {
      const first = c.objects[0];
      const rest = c.objects.length - 1;
      return first
        ? `${objectName(first)} keeps its finalizer ${first.finalizers.join(", ")}${rest > 0 ? ` (and ${plural(rest, "more object", "more objects")})` : ""}`
        : "objects with finalizers remain";
    }
    case "namespace-finalizers":
      return `all content is gone but the namespace still carries finalizers ${c.finalizers.join(", ")}`;
    case "content-unread": {
      const refused = listOf(c.forbidden.map(forbiddenLabel));
      if (c.forbidden.length === c.types.length)
        return `what is left cannot be told: the bot may not list ${refused} (RBAC refuses \`list\`), so this answer is partial until that is granted`;
      const listed = `${plural(c.types.length, "type", "types")} of the namespace could not be listed (${listOf(c.types)})`;
      return c.forbidden.length > 0
        ? `what is left cannot be told: ${listed}; RBAC refuses \`list\` on ${refused}, and the others may answer if you ask again`
        : `what is left cannot be told: ${listed}, so this answer is partial — ask again`;
    }
    case "content-deleting":
      return `${plural(c.objects, "object is", "objects are")} still being removed`;
    case "delete-refused-by-webhook":
      return `the namespace controller cannot delete its content: ${webhookText(c.webhook)} refuses the deletes`;
    case "delete-refused":
      return `the namespace controller cannot delete its content${c.resource !== undefined ? ` (${c.resource})` : ""}: "${truncate(c.message, 300)}"`;
    case "pods-on-lost-node":
      return `${plural(c.pods.length, "pod stays", "pods stay")} Terminating (${c.pods.slice(0, 3).join(", ")}${c.pods.length > 3 ? ", …" : ""}) because ${nodeText(c.node)}: no kubelet confirms the deletion`;
    case "claim-in-use":
      return `PersistentVolumeClaim ${objectName(c.claim)} keeps kubernetes.io/pvc-protection while ${c.pods.join(", ")} ${c.pods.length === 1 ? "mounts" : "mount"} it${c.podsStuck ? " (and those pods are stuck Terminating)" : c.podsHeld.length > 0 ? ` (${heldPods(c.podsHeld)})` : ""}`;
    case "namespace-finalizer":
      return `all content is gone but the namespace still carries its finalizer ${c.finalizer}, owned by ${c.controller}${c.candidates.length > 0 ? ` (${c.candidates.join(", ")})` : ""}: only it removes that finalizer`;
    case "namespace-missing":
      return "it does not exist: it was deleted, or the name is misspelt";
    case "not-deleting":
      return `it is ${c.phase}, not being deleted`;
  }
}

/**
 * "webhook validate.x of ValidatingWebhookConfiguration y (failurePolicy Fail, intercepts DELETE),
 * whose Service ns/svc does not exist".
 */
export function webhookText(w: WebhookRef): string {
  const policy = `failurePolicy ${w.failurePolicy}${w.interceptsDelete ? ", intercepts DELETE" : ""}`;
  const svc =
    w.service === undefined
      ? ""
      : w.serviceExists === false
        ? `, whose Service ${w.service} does not exist`
        : w.readyEndpoints === 0
          ? `, whose Service ${w.service} has no ready endpoint`
          : w.readyEndpoints !== undefined
            ? `, whose Service ${w.service} has ${plural(w.readyEndpoints, "ready endpoint", "ready endpoints")}`
            : `, which calls Service ${w.service}`;
  return `webhook ${w.webhook} of ${w.configurationKind} ${w.configuration} (${policy})${svc}`;
}

/** "their node n is NotReady (Ready=Unknown, NodeStatusUnknown: Kubelet stopped posting node status.)". */
export function nodeText(n: NodeRef): string {
  if (n.state === "missing") return `their node ${n.name} no longer exists`;
  const r = n.ready;
  const why = r
    ? ` (Ready=${r.status}${r.reason !== undefined ? `, ${r.reason}` : ""}${r.message !== undefined ? `: ${truncate(r.message, 160)}` : ""}${r.lastTransitionTime !== undefined ? `, since ${r.lastTransitionTime}` : ""})`
    : " (it reports no Ready condition)";
  return `their node ${n.name} is NotReady${why}`;
}

/** The evidence of the deeper causes, one line each (Slack details, terminal). */
export function deeperCauseLines(d: Pick<NamespaceDiagnosis, "cause">): string[] {
  const out: string[] = [];
  for (const c of d.cause) {
    if (c.kind === "delete-refused-by-webhook")
      out.push(`Deletes refused by ${webhookText(c.webhook)}: "${truncate(c.message, 400)}"`);
    else if (c.kind === "delete-refused") out.push(`Deletes fail: "${truncate(c.message, 400)}"`);
    else if (c.kind === "pods-on-lost-node")
      out.push(
        `Pods stuck Terminating because ${nodeText(c.node)}${c.node.taints.length > 0 ? `; taints ${c.node.taints.join(", ")}` : ""}: ${c.pods.join(", ")}`,
      );
    else if (c.kind === "claim-in-use")
      out.push(
        `PersistentVolumeClaim ${objectName(c.claim)} (kubernetes.io/pvc-protection) is mounted by ${c.pods.join(", ")}`,
      );
    else if (c.kind === "namespace-finalizer")
      out.push(
        `Namespace finalizer ${c.finalizer}: ${c.known ? "" : "not a well-known finalizer, "}owned by ${c.controller}${c.candidates.length > 0 ? ` (found: ${c.candidates.join(", ")})` : ""}`,
      );
  }
  return out;
}

/** A controller error without the controller-runtime prefix every reconcile failure carries. */
function errorText(text: string, n: number): string {
  return truncate(
    text
      .replace(/^Reconciler error: /, "")
      .replace(/\s+/g, " ")
      .replace(/\.$/, ""),
    n,
  );
}

/**
 * "aws-load-balancer-controller is running but fails to finalize Ingress myapp/x: failed to delete
 * securityGroup: …" — the controller's own error, said first.
 */
export function controllerFailing(c: Extract<CauseLink, { kind: "controller-error" }>, length = 160): string {
  const who = c.controller ?? "the controller";
  return c.running === true
    ? `${who} is running but fails to finalize ${objectName(c.object)}: ${errorText(c.text, length)}`
    : `${who} fails to finalize ${objectName(c.object)}${c.running === false ? " (not every replica is ready)" : ""}: ${errorText(c.text, length)}`;
}

/**
 * The first line of one blocker's section: the controller's own error for it, when it reports
 * one; `undefined` otherwise.
 */
export function blockerHeadline(
  d: Pick<NamespaceDiagnosis, "cause">,
  b: Pick<ObjectRef, "kind" | "namespace" | "name">,
): string | undefined {
  const c = d.cause.find(
    (x) =>
      x.kind === "controller-error" &&
      x.object.kind === b.kind &&
      x.object.namespace === b.namespace &&
      x.object.name === b.name,
  );
  return c?.kind === "controller-error" && c.controller !== undefined ? controllerFailing(c, 300) : undefined;
}

/** One failing group-version, named by its APIService: whether it is Available, what backs it, the fix. */
function apiServiceStep(f: DiscoveryFailureFinding): string {
  const a = f.apiService;
  if (!a) return `Check the aggregated API behind ${f.groupVersion}.`;
  const state =
    a.available === "True"
      ? `APIService ${a.name} reports Available, yet discovery of ${f.groupVersion} fails (${truncate(f.message, 120)})`
      : `APIService ${a.name} is not Available${a.reason ? ` (${a.reason})` : ""}${a.message ? `: "${truncate(a.message, 200)}"` : ""}`;
  if (!a.service) {
    return `${state}. It is served by kube-apiserver itself (no backing Service): check the API server.`;
  }
  const endpoints =
    a.readyEndpoints === undefined
      ? `its Service ${a.service} (ready endpoints could not be read)`
      : `its Service ${a.service} has ${plural(a.readyEndpoints, "ready endpoint", "ready endpoints")}`;
  const fix =
    a.readyEndpoints === 0
      ? `fix the pods behind ${a.service} (\`kubectl get pods -n ${a.service.split("/")[0] ?? ""}\`)`
      : `fix ${a.service} (its pods answer, but not the API server's discovery check: network policy, security group or certificate)`;
  return `${state}; ${endpoints} → ${fix}, or \`kubectl delete apiservice ${a.name}\` if that add-on was uninstalled.`;
}

/** `widgets.example.com`, or `secrets` for the core group: as the namespace controller names types. */
function forbiddenLabel(t: ForbiddenType): string {
  return t.group === "" ? t.resource : `${t.resource}.${t.group}`;
}

/** The first three, then "…". */
function listOf(items: readonly string[]): string {
  return `${items.slice(0, 3).join(", ")}${items.length > 3 ? `, … (${String(items.length)} in all)` : ""}`;
}

/** The chart's `rbac.explicitResources` entries that grant `list` on `types`, one per group. */
function explicitResources(types: readonly ForbiddenType[]): string {
  const byGroup = new Map<string, string[]>();
  for (const t of types) byGroup.set(t.group, [...(byGroup.get(t.group) ?? []), t.resource]);
  return [...byGroup]
    .map(([g, rs]) => `{apiGroups: ["${g}"], resources: [${rs.map((r) => `"${r}"`).join(", ")}]}`)
    .join(", ");
}

/** What usually fixes an error a controller reports, from its words; empty when nothing is clear. */
function errorHint(text: string): string {
  if (/not ?empty/i.test(text)) return " (empty it first, or use the operator's own policy to keep it)";
  if (/DependencyViolation|has dependent|in use|still referenced/i.test(text))
    return " (remove or detach what still depends on it)";
  if (/AccessDenied|not authorized|UnauthorizedOperation|forbidden/i.test(text))
    return " (grant the permission it lacks)";
  if (/failed calling webhook/i.test(text))
    return " (restore the webhook's backend, or exempt the namespace)";
  return "";
}

/** "pod db-0 is kept by its finalizer example.com/x" for each pod a finalizer of its own keeps. */
function heldPods(held: readonly { readonly pod: string; readonly finalizers: readonly string[] }[]): string {
  return held
    .map(
      (h) =>
        `pod ${h.pod} is kept by its finalizer${h.finalizers.length === 1 ? "" : "s"} ${h.finalizers.join(", ")}`,
    )
    .join("; ");
}

/** One remedy as a sentence. */
export function remedyText(r: DiagnosisRemedy, options: ProseOptions = {}): string {
  const command = options.command ?? DEFAULT_COMMAND;
  switch (r.kind) {
    case "find-refusal":
      return refusalStep(r);
    case "grant-list":
      return grantListStep(r);
    case "check-name":
      return r.similar.length > 0
        ? `Did you mean ${r.similar.map((n) => `\`${n}\``).join(" or ")}? No namespace is named \`${r.namespace}\`.`
        : "Check the name against `kubectl get namespaces`; a namespace that is gone needs no unblocking.";
    case "fix-api-service":
      return apiServiceStep(r.failure);
    case "check-aggregated-apis":
      return `Check the aggregated API: \`kubectl get apiservice\` and look for ${r.groupVersions.join(", ")} with AVAILABLE=False; fix its backing service, or delete the APIService if that add-on was removed.`;
    case "find-finalizer-owner":
      return r.likely.length > 0
        ? `\`${r.finalizer}\` is not a well-known finalizer; ${r.likely.slice(0, 3).join(", ")} ${r.likely.length === 1 ? "is" : "are"} likely its controller (${r.likely.length === 1 ? "its" : "their"} name or image says "${r.word ?? ""}"): confirm before removing it, and read ${r.likely.length === 1 ? "its" : "their"} logs for why it has not.`
        : `\`${r.finalizer}\` is not a well-known finalizer: find the controller that adds it (search your operators for that string) before removing it.`;
    case "install-controller":
      return `${r.controller} is not installed in this cluster (no Deployment matches its chart labels, name or image), so nothing will ever remove \`${r.finalizer}\`: reinstall ${r.controller} to let it finish its clean-up, or remove the finalizer with approval once you have a clean-up plan for ${r.cleanup}.`;
    case "check-controller-runs":
      return `Could not tell whether ${r.controller} runs${r.note !== undefined ? ` (${r.note})` : ""}: check that it does before anything else — it is what removes \`${r.finalizer}\`.`;
    case "heal-controller": {
      const c = r.deployment;
      return `${r.controller} \`${c.namespace}/${c.name}\` has ${String(c.readyReplicas)}/${String(c.replicas)} ready replicas: make it healthy first, it is the one that removes \`${r.finalizer}\`.`;
    }
    case "one-controller":
      return `${String(r.deployments.length)} ${r.controller} deployments may reconcile \`${r.finalizer}\` (${r.deployments.join(", ")}): check that only one serves this cluster and ingress class.`;
    case "fix-group-member":
      return `IngressGroup \`${r.group}\` fails to build because of another member, ${r.culprits.join(", ")}: fix that member and the controller removes ${objectName(r.object)} from the group by itself — forcing its finalizer is not needed, and deleting the group's load balancer or security groups would break the live members.`;
    case "leave-in-place": {
      const users = r.usedBy;
      const names = r.resources;
      return `Leave in place — still in use by ${users.slice(0, 3).join(", ")}${users.length > 3 ? ` and ${String(users.length - 3)} more` : ""}: ${names.slice(0, 5).join(", ")}${names.length > 5 ? ` and ${String(names.length - 5)} more` : ""}. Deleting any of them, or their interfaces and rules, would break live traffic.`;
    }
    case "release-dependent":
      return releaseDependentStep(r);
    case "deregister-targets":
      return deregisterStep(r);
    case "fix-controller-error":
      return `${r.controller} is running and says why it cannot finish ${objectName(r.object)}: "${truncate(r.text, 200)}". Fix that${errorHint(r.text)} and it removes \`${r.finalizer}\` by itself${r.letGo !== undefined ? `; or, to keep what it stands for, ${r.letGo}` : ""}. Forcing the finalizer instead leaves behind whatever it was deleting.`;
    case "read-controller-error":
      return `The controller reports an error for ${objectName(r.object)}: "${truncate(r.text, 200)}".`;
    case "find-group-dependents":
      return "A security group cannot be deleted while something depends on it: look for ENIs that still use it (`aws ec2 describe-network-interfaces --filters Name=group-id,Values=<sg>`) and rules in other groups that reference it (`ip-permission.group-id`).";
    case "force-finalizer":
      return forceStep(r, command, options.buttons);
    case "wait":
      return `Nothing blocks it yet; check again in a minute (\`${command} watch ns ${r.namespace}\`).`;
    case "namespace-finalizer-builtin":
      return "The namespace controller removes `kubernetes` within seconds once content is gone; if it persists, check kube-controller-manager and any failing API discovery.";
    case "namespace-finalizer-custom":
      return `A custom finalizer on the namespace itself (${r.finalizers.join(", ")}): find the controller that set it; only it should remove it (via the \`/finalize\` subresource).`;
    case "fix-webhook":
      return webhookStep(r.webhook);
    case "recover-node":
      return nodeStep(r);
    case "release-claim":
      return `PersistentVolumeClaim ${objectName(r.claim)} goes by itself once ${r.pods.join(", ")} ${r.pods.length === 1 ? "is" : "are"} gone: deal with the pods${r.podsHeld.length > 0 ? ` (${heldPods(r.podsHeld)}: what owns that finalizer must finish first)` : ""}, never with its kubernetes.io/pvc-protection finalizer.`;
    case "fix-argo-ownership":
      return `Root cause to fix after recovery: ${r.redFlag}`;
  }
}

/** One kind of remedy, by its `kind`. */
type RemedyOf<K extends DiagnosisRemedy["kind"]> = Extract<DiagnosisRemedy, { kind: K }>;

/** The namespace controller's deletes are refused, or its objects stay: find what serves or refuses them. */
function refusalStep(r: RemedyOf<"find-refusal">): string {
  const what = r.resource !== undefined ? ` of ${r.resource}` : "";
  return /^unexpected items still remain/.test(r.message)
    ? `Objects${what} stay after the namespace controller deletes them, with no finalizer: whatever serves that type does not really delete them. Check its API service or controller (\`kubectl get apiservices\`, its pods' logs); once deletes work, the namespace controller deletes the rest by itself (no forced removal needed).`
    : `The namespace controller's deletes${what} are refused: "${truncate(r.message, 300)}". Find what refuses them — an admission webhook or policy the message names (\`kubectl get validatingwebhookconfigurations,mutatingwebhookconfigurations,validatingadmissionpolicies\`) — and fix or remove it; the namespace controller then deletes the rest by itself (no forced removal needed).`;
}

/** The bot may not list some types: the chart values (or the RBAC) that let it. */
function grantListStep(r: RemedyOf<"grant-list">): string {
  // The chart grants Secrets by their own value, never through rbac.explicitResources.
  const others = r.types.filter((t) => !(t.group === "" && t.resource === "secrets"));
  const secrets = others.length < r.types.length;
  const chart = [
    ...(others.length > 0 ? [`add \`${explicitResources(others)}\` to \`rbac.explicitResources\``] : []),
    ...(secrets ? ["set `rbac.listSecrets: true` (it lets the bot's pods list every Secret)"] : []),
  ].join(" and ");
  return `The bot may not list ${listOf(r.types.map(forbiddenLabel))}, so what is left of ${r.types.length === 1 ? "that type" : "those types"} stays unknown however often you ask. With the Helm chart, ${chart} and upgrade the release; otherwise grant \`list\` on ${r.types.length === 1 ? "it" : "them"} to the bot's ServiceAccounts.`;
}

/** A security group held by a dependent: how to release it (and that the controller then finishes). */
function releaseDependentStep(r: RemedyOf<"release-dependent">): string {
  const f = r.fix;
  const cmds = f.commands.map((c) => `\`${c}\``).join(" then ");
  return f.actionable
    ? `${r.groupId} (${r.groupName}) is held by the ${f.what}: ${f.action}${cmds ? ` — ${cmds}` : ""}. The controller's next retry then deletes the group and removes the finalizer by itself (no forced removal needed).`
    : `${r.groupId} (${r.groupName}) is held by the ${f.what}: ${f.action}${cmds ? ` (${cmds})` : ""}.`;
}

/** A binding's targets left registered: not while they serve, all when the group is its own, else only its own. */
function deregisterStep(r: RemedyOf<"deregister-targets">): string {
  const shown = `${r.targets.slice(0, 10).join(" ")}${r.targets.length > 10 ? ` and ${String(r.targets.length - 10)} more` : ""}`;
  const tg = `target group ${r.targetGroupName}${r.owner !== undefined ? ` (${r.owner})` : ""}`;
  if (r.serving.length > 0)
    return `Do not deregister: ${plural(r.serving.length, "target", "targets")} of ${tg} ${r.serving.length === 1 ? "is" : "are"} healthy and serving traffic (${r.serving.slice(0, 5).join(" ")}${r.serving.length > 5 ? " …" : ""}). Once ${objectName(r.object)}'s pods are gone (the namespace controller deletes them), deregister what is left with \`${r.command}\`.`;
  return r.actionable
    ? `Deregister the ${plural(r.targets.length, "target", "targets")} ${objectName(r.object)} left in ${tg}: ${shown} — \`${r.command}\`. The controller's next retry then has nothing left to deregister and can remove its finalizer by itself (no forced removal needed). The target group itself stays: it is not the binding's to delete.`
    : `${tg} still has ${plural(r.targets.length, "registered target", "registered targets")} (${shown}), but ${r.otherBindings.join(", ")} also bind${r.otherBindings.length === 1 ? "s" : ""} it: deregister only ${objectName(r.object)}'s own (its Service's endpoints) with \`aws elbv2 deregister-targets --target-group-arn ${r.targetGroupArn} --targets Id=…,Port=…\`, never the others'.`;
}

/** The forced removal, as the button (on the card) or the command, and what to clean up after it. */
function forceStep(r: RemedyOf<"force-finalizer">, command: string, buttons: boolean | undefined): string {
  const o = r.object;
  const cmd = `\`${command} finalize ${o.kind.toLowerCase()}/${o.name} -n ${o.namespace} --reason "<why>"\``;
  const after = r.loadBalancer
    ? "afterwards check for orphaned AWS resources"
    : "afterwards clean up by hand what its controller would have deleted";
  return buttons
    ? `Recovery first, once the cause is confirmed and a clean-up plan exists: *Request finalizer removal* (or ${cmd}) asks a second person to approve removing the finalizer; ${after}.`
    : `Recovery first, once the cause is confirmed and a clean-up plan exists: ${cmd} asks a second person to approve removing the finalizer; ${after}.`;
}

/** A webhook that refuses the namespace controller's deletes: restore its backend, exempt, or remove it. */
function webhookStep(w: WebhookRef): string {
  const kind = w.configurationKind.toLowerCase();
  const restore =
    w.service !== undefined
      ? `restore ${w.service} (its Deployment and pods: \`kubectl get pods -n ${w.service.split("/")[0] ?? ""}\`)`
      : "make its URL answer";
  return `The namespace controller's deletes fail on ${webhookText(w)}: ${restore}; or, to keep the add-on, exempt this namespace in the webhook's \`namespaceSelector\`; or if that add-on is gone remove its configuration with \`kubectl delete ${kind} ${w.configuration}\`. The namespace controller then deletes the rest by itself (no forced removal needed).`;
}

/** Pods on a lost node: what deletes them when the node is gone, or when it is only NotReady. */
function nodeStep(r: RemedyOf<"recover-node">): string {
  const n = r.node;
  const first = r.pods[0] ?? "<pod>";
  return n.state === "missing"
    ? `Node ${n.name} no longer exists: the pod garbage collector force-deletes its pods within about a minute; if they stay, check kube-controller-manager, or \`kubectl delete pod ${first} -n ${r.namespace} --grace-period=0 --force\`.`
    : `Node ${n.name} is NotReady, so nothing confirms the deletion of ${r.pods.join(", ")}: bring its kubelet back, or if the machine is gone \`kubectl delete node ${n.name}\` (the pod garbage collector then removes its pods). Force-delete a pod (\`kubectl delete pod ${first} -n ${r.namespace} --grace-period=0 --force\`) only once you know its containers no longer run.`;
}

/** Every remedy as a sentence, in order. */
export function nextStepTexts(d: Pick<NamespaceDiagnosis, "remedies">, options: ProseOptions = {}): string[] {
  return d.remedies.map((r) => remedyText(r, options));
}

/** One object still blocking, as the waits' status and the terminal watch name it: `Kind ns/name (finalizers)`. */
export function blockerLine(b: Pick<Blocker, "kind" | "namespace" | "name" | "finalizers">): string {
  return `${b.kind} ${b.namespace}/${b.name} (${b.finalizers.join(", ")})`;
}

/** Why every type was listed, in a few words. */
function fallbackReason(r: ScanFallback): string {
  switch (r.kind) {
    case "no-report":
      return `the namespace controller has not reported yet (no ${r.condition} condition)`;
    case "report-unknown":
      return `the namespace controller's ${r.condition} condition is Unknown`;
    case "report-unreadable":
      return `the namespace controller's ${r.condition} message could not be read`;
    case "discovery-failed":
      return r.by === "unstuck"
        ? "API discovery failed, so a type may be missing from the report"
        : "the namespace controller's discovery failed, so its report may miss types";
    case "content-failure":
      return "the namespace controller failed to delete some content, so its report may miss types";
    case "unknown-type":
      return `the report names ${r.resource}, which discovery does not serve`;
    case "count-mismatch":
      return `the report says ${r.resource} has ${String(r.reported)}, but ${String(r.found)} ${r.found === 1 ? "was" : "were"} found`;
    case "finalizer-mismatch":
      return `the report counts ${plural(r.reported, "object", "objects")} with finalizer ${r.finalizer}, but the types it names hold ${String(r.found)}`;
  }
}

/**
 * How the namespace's content was found, in one line: from the namespace controller's report, or
 * by listing every type and why. Plain text (Slack escapes it).
 */
export function scanText(scan: ContentScan): string {
  return scan.path === "report"
    ? `listed only the ${plural(scan.listedTypes, "type", "types")} the namespace controller reports as remaining`
    : `listed every namespaced type (${String(scan.listedTypes)}): ${fallbackReason(scan.reason)}`;
}
