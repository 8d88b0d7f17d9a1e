/** Words and rules several action kinds share. */
import { esc } from "../../slack/blocks/text.js";

/** A plan the bot files exactly as planned. */
export const asPlanned = <A>(a: A): A => a;

/** The card's *Why* when a request carries no evidence. */
export const NO_EVIDENCE = "_no evidence attached: check the diagnosis before approving_";

/** A code block whose own backticks cannot end it early. */
export function codeBlock(raw: string): string {
  return "```\n" + esc(raw.replace(/`/g, "ˋ")) + "\n```";
}

/**
 * The post-mortem question after a load balancer was replaced: asked after a repoint, or when the
 * bot re-checked a path.
 */
export const PATH_LESSON =
  "- _Prompt: when the load balancer was replaced, what would have checked the whole path Route 53 → CloudFront → ALB at once?_";

/** Seconds as whole minutes. */
export const minutes = (seconds: number): string => String(Math.round(seconds / 60));
