export { startFakeSlack } from "./fake-slack.js";
export type {
  FakeChannel,
  FakeFile,
  FakeMessage,
  FakeSlack,
  FakeSlackOptions,
  SlackArrival,
  SlackCall,
  SlackFault,
  SlackHold,
  SlackResponsePost,
} from "./fake-slack.js";
export { interactiveEnvelope, slashCommandEnvelope } from "./socket.js";
export type { SocketAck, SocketEnvelope } from "./socket.js";
export {
  appMentionBody,
  blockActionsBody,
  postSigned,
  postSignedJson,
  signRequest,
  slashCommandBody,
  viewSubmissionBody,
} from "./signing.js";
export type {
  AppMentionFields,
  BlockActionFields,
  SignedHeaders,
  SlashCommandFields,
  ViewSubmissionFields,
} from "./signing.js";
