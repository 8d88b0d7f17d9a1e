/**
 * The post-mortem draft as Markdown: the one text every surface gives (the terminal prints it, `--json`
 * carries it, Slack shows its start on a card and uploads it whole), so it is written once, here. The
 * people who acted are named as Slack mentions (`<@U…>`): the draft is pasted back into Slack and
 * its write-ups, where a mention finds the person.
 */
import {
  buildTimelineDraft,
  draftText,
  type TimelineDraft,
  type TimelineEntry,
  type TimelineOptions,
} from "../timeline/build.js";

export interface Timeline {
  readonly markdown: string;
  /** Audit entries the draft covers. */
  readonly entries: number;
  /** The UTC day (`YYYY-MM-DD`) of the first event, else of the window's start, else undefined. */
  readonly date?: string;
}

/** A person of the draft, as a mention. */
const mention = (userId: string): string => `<@${userId}>`;

/** The draft's Markdown. */
export function renderTimelineMarkdown(draft: TimelineDraft): string {
  return draftText(draft, mention);
}

/** The Markdown draft of `entries` (see `buildTimelineDraft` for what it takes). */
export function buildTimeline(entries: readonly TimelineEntry[], options: TimelineOptions = {}): Timeline {
  const draft = buildTimelineDraft(entries, options);
  return {
    markdown: renderTimelineMarkdown(draft),
    entries: draft.entries,
    ...(draft.date !== undefined ? { date: draft.date } : {}),
  };
}
