/**
 * A traffic-path card's *Fix the path* once it can do nothing more: repainted as repaired (the repair
 * asked from it was made). The card was remembered by the surface when the button was clicked; the
 * edit goes through the durable notify queue, once per request, named by ids: the applier renders it
 * from the signed request.
 */
import type { ApprovalRequest } from "../requests/model.js";
import type { RepairCards } from "../jobs/repair-cards.js";
import type { Logger } from "../log.js";
import type { QueueEdit } from "./namespace-gone.js";

export interface RepairCardDeps {
  readonly cards: Pick<RepairCards, "take">;
  readonly queueEdit: QueueEdit;
  readonly now: () => Date;
  readonly log: Logger;
}

/** Repaint the card a made repair was asked from; never throws (the waits that follow matter more). */
export function repaintRepairedCard(deps: RepairCardDeps): (request: ApprovalRequest) => Promise<void> {
  return async (request) => {
    try {
      const card = await deps.cards.take(request.id);
      if (card === undefined) return;
      await deps.queueEdit(
        {
          kind: "repaired-card",
          requestId: request.id,
          channel: card.channel,
          ts: card.ts,
          at: deps.now().toISOString(),
        },
        `repaired:${request.id}`,
      );
    } catch (err) {
      deps.log.warn(
        { requestId: request.id, err: { message: err instanceof Error ? err.message : String(err) } },
        "the repaired path's card could not be repainted",
      );
    }
  };
}
