/**
 * The diagnosis card's own buttons: *Details* posts the evidence, every blocker and every step in the
 * card's thread; *Check again* diagnoses afresh and posts the new card there. Read-only: the value
 * names only a namespace (and in a fleet the cluster of the card), client-supplied, so validated, and
 * the diagnosis is read again, never taken from the payload.
 */
import { ErrorCode, toUserError, UnstuckError } from "../errors.js";
import type { NamespaceDiagnosis } from "../diagnosis/types.js";
import { assertNamespaceName } from "../kube/names.js";
import { registerActions, type ActionContext, type HasActionRouter } from "./actions.js";
import { clusterOfValue, withCluster } from "./blocks/cluster-value.js";
import { DiagnosisActionId, renderDiagnosisBlocks, renderDiagnosisDetails } from "./blocks/diagnosis.js";
import { safe } from "./blocks/text.js";
import { answerFile } from "./blocks/index.js";
import { attachAnswerFile } from "./answer-file.js";

export interface DiagnosisActionDeps {
  /**
   * Diagnoses one namespace (the same read as `ns`); in a fleet on `cluster`, the one the button
   * names (`undefined`: a button that names none, the fleet then chooses from the card's channel).
   */
  readonly diagnose: (namespace: string, cluster?: string, channelId?: string) => Promise<NamespaceDiagnosis>;
  /** In a fleet: the cluster that answered a diagnosis, named again in the new card's buttons. */
  readonly clusterOf?: (diagnosis: NamespaceDiagnosis) => string | undefined;
  /** The slash command as configured, named in the steps. */
  readonly command: string;
}

/** The namespace a card button names; throws `BadInput` for anything else. */
export function parseDiagnosisValue(value: string | undefined): string {
  let raw: unknown;
  try {
    raw = JSON.parse(value ?? "");
  } catch {
    throw new UnstuckError(ErrorCode.BadInput, "This button does not name a namespace.");
  }
  const ns = (raw as { namespace?: unknown } | null)?.namespace;
  if (typeof ns !== "string")
    throw new UnstuckError(ErrorCode.BadInput, "This button does not name a namespace.");
  return assertNamespaceName(ns);
}

export function registerDiagnosisActions(target: HasActionRouter, deps: DiagnosisActionDeps): void {
  const handler =
    (kind: "details" | "recheck") =>
    async (ctx: ActionContext): Promise<void> => {
      try {
        const namespace = parseDiagnosisValue(ctx.action.value);
        const named = clusterOfValue(ctx.action.value);
        const message = ctx.message;
        if (message === undefined) {
          throw new UnstuckError(ErrorCode.BadInput, "This button is not on a message I can answer under.");
        }
        const d = await deps.diagnose(namespace, named, message.channelId);
        const card =
          kind === "details"
            ? renderDiagnosisDetails(d, { command: deps.command })
            : renderDiagnosisBlocks(d, { command: deps.command });
        // The new card's buttons go to the same cluster.
        const cluster = named ?? deps.clusterOf?.(d);
        const rendered = cluster !== undefined ? withCluster(card, cluster) : card;
        await ctx.client.chat.postMessage({
          channel: message.channelId,
          thread_ts: message.ts,
          text: rendered.text,
          blocks: rendered.blocks,
        });
        // A command too long for the card: whole in a file in the same thread, as the card says.
        const file = answerFile(
          { type: "diagnosis", diagnosis: d, ...(kind === "details" ? { all: true } : {}) },
          card,
        );
        if (file !== undefined)
          await attachAnswerFile(
            ctx.client,
            file,
            { channel: message.channelId, threadTs: message.ts },
            ctx.scope.log,
          );
        ctx.scope.log.info(
          { namespace, kind, ...(cluster !== undefined ? { cluster } : {}) },
          "diagnosis card action answered in the thread",
        );
      } catch (err) {
        const { code, message } = toUserError(err);
        if (code === ErrorCode.Internal) ctx.scope.log.error({ err }, `diagnosis ${kind} failed`);
        await ctx.respond({
          response_type: "ephemeral",
          replace_original: false,
          text: safe(`:no_entry_sign: ${message}`, 1000),
        });
      }
    };
  registerActions(target, [
    { actionId: DiagnosisActionId.Details, handler: handler("details") },
    { actionId: DiagnosisActionId.Recheck, handler: handler("recheck") },
  ]);
}
