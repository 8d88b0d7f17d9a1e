/**
 * An error as Slack shows it: its message, except where the engine left Slack the words for a person
 * or a message (the refusal of a second request for the same object names the existing one's
 * requester as a mention and its message as a link).
 */
import { duplicateOf, duplicateRequestSentence, type DuplicateWords } from "../../requests/duplicate.js";
import { toUserError, type ErrorCode, type ErrorDetails } from "../../errors.js";
import { messageLink } from "./links.js";

const SLACK_WORDS: DuplicateWords = {
  person: (userId) => `<@${userId}>`,
  message: (message) => messageLink(message),
};

/** The message of an error (as `toUserError` gives it) in Slack's words. */
export function slackErrorMessage(error: {
  readonly message: string;
  readonly details: ErrorDetails;
}): string {
  const duplicate = duplicateOf(error.details);
  return duplicate !== undefined ? duplicateRequestSentence(duplicate, SLACK_WORDS) : error.message;
}

/** `toUserError`, worded for Slack. */
export function slackUserError(err: unknown): { code: ErrorCode; message: string; details: ErrorDetails } {
  const error = toUserError(err);
  return { ...error, message: slackErrorMessage(error) };
}
