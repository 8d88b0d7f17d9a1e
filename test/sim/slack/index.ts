export { startFakeSlack } from "./fake-slack.js";
export type { FakeChannel, FakeSlack, FakeSlackOptions, SlackCall, SlackResponsePost } from "./fake-slack.js";
export { blockActionsBody, postSigned, signRequest, slashCommandBody } from "./signing.js";
export type { BlockActionFields, SignedHeaders, SlashCommandFields } from "./signing.js";
