/**
 * The one minimum length of the reason every change request carries, checked by the commands, the
 * Slack forms and the workflow alike: a reason is a sentence, not a word.
 */
export const MIN_REASON_LENGTH = 10;
