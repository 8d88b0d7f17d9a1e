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

/** Seconds as whole minutes. */
export const minutes = (seconds: number): string => String(Math.round(seconds / 60));
