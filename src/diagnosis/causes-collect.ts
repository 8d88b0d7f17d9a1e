/**
 * Reads what a Terminating namespace's own state points at, and nothing else, through the
 * `KubePort`: the on-demand reads the causes of the table declare (`needs`), each when its cause
 * asks for it — the admission webhooks `NamespaceDeletionContentFailure` names (with whether their
 * Service exists and has a ready endpoint); the namespace's pods with their node and claims, and
 * the nodes of the pods being deleted. What cannot be read is a warning; the analysis
 * (`analyze.ts`) names the causes.
 */
import { toUserError } from "../errors.js";
import type { KubePort, NodeSnapshot } from "../kube/port.js";
import type { NamespaceSnapshot } from "../kube/types.js";
import { webhooksNamedIn } from "./causes/refusals.js";
import type { CauseReads, ListedType, OnDemandRead } from "./causes/rule.js";
import { causeTable } from "./causes/table.js";

/** The Kubernetes reads the causes need: every one required, so none can be silently absent. */
export type CauseKube = Pick<
  KubePort,
  "listAdmissionWebhooks" | "serviceExists" | "getServiceEndpoints" | "listPodPlacements" | "getNode"
>;

/** At most this many nodes are read (pods of one namespace rarely sit on more lost nodes). */
const MAX_NODES = 10;

export async function collectCauses(
  kube: CauseKube,
  ns: NamespaceSnapshot,
  listed: readonly ListedType[],
  warnings: string[],
): Promise<CauseReads> {
  const wanted = (read: OnDemandRead): boolean =>
    causeTable.some((rule) =>
      rule.needs.some((n) => typeof n !== "string" && n.read === read && n.when(ns, listed)),
    );
  const [webhooks, placement] = await Promise.all([
    wanted("webhooks") ? webhookReads(kube, ns, warnings) : undefined,
    wanted("placements") ? podReads(kube, ns.name, warnings) : {},
  ]);
  return { ...(webhooks ? { webhooks } : {}), ...placement };
}

async function webhookReads(
  kube: CauseKube,
  ns: NamespaceSnapshot,
  warnings: string[],
): Promise<CauseReads["webhooks"]> {
  const failure = ns.conditions.find((c) => c.type === "NamespaceDeletionContentFailure");
  const named = webhooksNamedIn(failure?.message ?? "");
  let all;
  try {
    all = await kube.listAdmissionWebhooks();
  } catch (err) {
    warnings.push(`Could not read the admission webhook configurations: ${toUserError(err).message}`);
    return undefined;
  }
  const found = all.filter((w) => named.includes(w.name));
  return Promise.all(
    found.map(async (webhook) => {
      const svc = webhook.service;
      if (!svc) return { webhook };
      let serviceExists: boolean | undefined;
      let readyEndpoints: number | undefined;
      try {
        serviceExists = await kube.serviceExists(svc.namespace, svc.name);
        if (serviceExists) readyEndpoints = (await kube.getServiceEndpoints(svc.namespace, svc.name)).ready;
      } catch (err) {
        warnings.push(
          `Could not read Service ${svc.namespace}/${svc.name} of webhook ${webhook.name}: ${toUserError(err).message}`,
        );
      }
      return {
        webhook,
        ...(serviceExists !== undefined ? { serviceExists } : {}),
        ...(readyEndpoints !== undefined ? { readyEndpoints } : {}),
      };
    }),
  );
}

async function podReads(
  kube: CauseKube,
  namespace: string,
  warnings: string[],
): Promise<Pick<CauseReads, "pods" | "nodes">> {
  let pods;
  try {
    pods = await kube.listPodPlacements(namespace);
  } catch (err) {
    warnings.push(`Could not read the pods of ${namespace} with their nodes: ${toUserError(err).message}`);
    return {};
  }
  const names = [
    ...new Set(
      pods.flatMap((p) =>
        p.deletionTimestamp !== undefined && p.nodeName !== undefined ? [p.nodeName] : [],
      ),
    ),
  ];
  const nodes = new Map<string, NodeSnapshot | null>();
  if (names.length > 0) {
    const read = names.slice(0, MAX_NODES);
    if (names.length > read.length)
      warnings.push(
        `Nodes were read for the first ${read.length} of ${names.length} nodes of Terminating pods.`,
      );
    await Promise.all(
      read.map(async (n) => {
        try {
          nodes.set(n, await kube.getNode(n));
        } catch (err) {
          warnings.push(`Could not read node ${n}: ${toUserError(err).message}`);
        }
      }),
    );
  }
  return { pods, nodes };
}
