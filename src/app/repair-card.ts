/**
 * A traffic-path card's *Fix the path* once it can do nothing more: repainted without the button, with
 * why (the repair asked from it was made). The card was remembered by the surface when the button was
 * clicked; the edit goes through the durable notify queue, once per request.
 */
import type { ApprovalRequest } from "../approvals/types.js";
import type { RepairCard, RepairCards } from "../jobs/repair-cards.js";
import type { Logger } from "../log.js";
import type { QueueEdit, Repainted } from "./namespace-gone.js";

export interface RepairCardPresenter {
  /** The card once the repair asked from it was made at `at`. */
  readonly repaired: (card: RepairCard["blocks"], at: Date) => Repainted;
}

export interface RepairCardDeps {
  readonly cards: Pick<RepairCards, "take">;
  readonly queueEdit: QueueEdit;
  readonly present: RepairCardPresenter;
  readonly now: () => Date;
  readonly log: Logger;
}

/** Repaint the card a made repair was asked from; never throws (the waits that follow matter more). */
export function repaintRepairedCard(deps: RepairCardDeps): (request: ApprovalRequest) => Promise<void> {
  return async (request) => {
    try {
      const card = await deps.cards.take(request.id);
      if (card === undefined) return;
      const message = deps.present.repaired(card.blocks, deps.now());
      await deps.queueEdit(
        { channel: card.channel, ts: card.ts, text: message.text, blocks: message.blocks },
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
