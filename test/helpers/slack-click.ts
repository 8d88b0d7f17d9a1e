/**
 * A button click as Slack sends it to the bot: a signed `block_actions` payload carrying the
 * message's blocks as they read now in the fake Slack, and a `response_url` of its own.
 */
import { expect } from "vitest";
import { blockActionsBody, postSigned, type FakeSlack } from "../sim/slack/index.js";

export interface ClickTarget {
  /** The bot's Slack request URL. */
  readonly events: string;
  readonly fake: FakeSlack;
  readonly secret: string;
  readonly channel: string;
}

/** `user` clicks `actionId` (with `value`) on the message `ts`; the bot must answer 200. */
export async function clickButton(
  t: ClickTarget,
  actionId: string,
  value: string,
  user: string,
  ts: string,
  trigger?: string,
): Promise<void> {
  const res = await postSigned(
    t.events,
    t.secret,
    blockActionsBody({
      actionId,
      value,
      userId: user,
      channelId: t.channel,
      messageTs: ts,
      responseUrl: t.fake.responseUrl(`click-${actionId}-${user}`),
      ...(trigger !== undefined ? { triggerId: trigger } : {}),
      blocks: (t.fake.message(t.channel, ts)?.blocks as unknown[] | undefined) ?? [],
    }),
  );
  expect(res.status).toBe(200);
}
