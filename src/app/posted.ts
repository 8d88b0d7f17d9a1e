/**
 * After a command's answer is posted: a diagnosis card or a "Watching…" message is recorded, so the
 * namespace-gone wait repaints it once the namespace's state is final; a watch then starts the
 * namespace's wait in the message's thread, or points at the wait already running.
 */
import type { CommandResult } from "../command-result.js";
import type { NamespaceDiagnosis } from "../diagnosis/types.js";
import { NamespaceMessageKind, type NamespaceMessages } from "../jobs/namespace-messages.js";
import { runningThread, type PostedMessage, type StartNamespaceWait } from "./namespace-wait.js";

export interface AfterPostDeps<Card> {
  readonly messages: Pick<NamespaceMessages, "record">;
  readonly cluster: string;
  readonly startWait: StartNamespaceWait;
  /** The diagnosis card as the surface posted it (the watch message adds one intro line above it). */
  readonly renderCard: (diagnosis: NamespaceDiagnosis) => Card;
  /**
   * The surface's edit of the posted watch message: the namespace is already watched, progress and
   * result are in `running`'s thread (the card kept below).
   */
  readonly showJoined: (
    posted: PostedMessage,
    namespace: string,
    card: Card,
    running: PostedMessage,
  ) => Promise<void>;
}

export function afterPost<Card>(
  deps: AfterPostDeps<Card>,
): (result: CommandResult, posted: PostedMessage) => Promise<void> {
  return async (result, posted) => {
    if (result.type !== "diagnosis" && result.type !== "watch") return;
    if (result.diagnosis.verdict === "not-found") return;
    const namespace = result.diagnosis.namespace;
    const kind = result.type === "watch" ? NamespaceMessageKind.Watch : NamespaceMessageKind.Diagnosis;
    // Recorded (where it is, signed) before the wait starts, so a wait that ends at its first check
    // still repaints it.
    await deps.messages.record(deps.cluster, { kind, namespace, channel: posted.channel, ts: posted.ts });
    if (result.type !== "watch") return;
    const started = await deps.startWait(namespace, posted);
    if (started.joined) {
      // One wait per namespace: point at the running one instead of a second status and "gone".
      await deps.showJoined(posted, namespace, deps.renderCard(result.diagnosis), runningThread(started));
    }
  };
}
