/**
 * The incident timeline: audit entries → a Markdown post-mortem draft in the shape of the seed
 * incident's write-up (docs/incident.md): title, what happened, timeline in UTC, recovery, then cause
 * and lessons left as prompts for the humans. Pure: no clock, no I/O; the command reads the stream
 * and passes the entries in.
 *
 * Besides the requests' events, the draft carries the bot's own observations (`observed.*` entries:
 * diagnoses, path checks, orphan checks, waits started and finished, path re-checks), which fill the
 * timeline between the human steps and say how recovery was verified. With `thread`, only the events of
 * one Slack thread are taken: entries recorded with that channel and thread, and every event of a request
 * whose message is that thread's parent (its `request.posted` entry says where it was posted).
 *
 * Security property: the draft is posted to Slack and pasted into documents, so nothing a user or a
 * cluster wrote (reasons, targets, results, ids) may reach it as markup. Foreign text is always
 * rendered as an inline code span whose content cannot close the span, start a line, or carry a
 * Slack control sequence (`<`/`>` become look-alikes). The people who acted are not text here: a
 * line holds them as {@link DraftPerson} parts (for ids in Slack's own format), and the renderer of
 * the draft (`src/render/timeline-markdown.ts`) names them.
 */
import { REQUEST_POSTED_EVENT, type AuditActor, type AuditEntry } from "../audit/entry.js";
import { isObservation, ObservationKind, OBSERVED_PREFIX } from "../audit/observation.js";
import { clock, plural } from "../util/format.js";
import { ACTION_KINDS } from "../requests/action-kinds.js";
import { PATH_LESSON } from "../requests/kinds/words.js";

/** An audit entry, with its stream id when it came from Redis (orders entries of the same millisecond). */
export type TimelineEntry = AuditEntry & { readonly streamId?: string };

export interface TimelineOptions {
  /** ISO-8601: entries before this are left out. */
  readonly since?: string;
  /** Only this request, and the requests about the same object or namespace around it. */
  readonly requestId?: string;
  /**
   * With `requestId` and no `since`: how far before the request's first entry a related request
   * may start (default 2 h) and how far after its last (default 24 h).
   */
  readonly relatedBeforeMs?: number;
  readonly relatedAfterMs?: number;
  /** Only the events of this Slack thread (channel id and the `ts` of the thread's parent message). */
  readonly thread?: { readonly channel: string; readonly ts: string };
  /** The stream was read only back to this time (a scan limit): said in the draft. */
  readonly readBackTo?: string;
  /** When the draft is made (ISO-8601), for its byline. */
  readonly generatedAt?: string;
}

/** A person who acted, by Slack user id (only ids in Slack's own format become one). */
export interface DraftPerson {
  readonly person: string;
}

/** A piece of a draft line: Markdown the builder wrote (foreign text already in code spans), or a person. */
export type DraftPart = string | DraftPerson;

/** One line of the draft. */
export type DraftLine = readonly DraftPart[];

/** The draft before its people are named: its lines, and what it covers. */
export interface TimelineDraft {
  readonly lines: readonly DraftLine[];
  /** Audit entries the draft covers. */
  readonly entries: number;
  /** The UTC day (`YYYY-MM-DD`) of the first event, else of the window's start, else undefined. */
  readonly date?: string;
}

/** The draft's Markdown, each person named by `person` (given the user id). */
export function draftText(draft: TimelineDraft, person: (userId: string) => string): string {
  return draft.lines
    .map((line) => line.map((part) => (typeof part === "string" ? part : person(part.person))).join(""))
    .join("\n");
}

/** A line from a template whose values may be people or lines of their own (flattened in place). */
function line(strings: TemplateStringsArray, ...values: readonly (DraftPart | DraftLine)[]): DraftPart[] {
  const out: DraftPart[] = [];
  strings.forEach((text, i) => {
    if (text !== "") out.push(text);
    const value = values[i];
    if (value === undefined) return;
    if (typeof value === "string") {
      if (value !== "") out.push(value);
    } else if ("person" in value) out.push(value);
    else out.push(...value);
  });
  return out;
}

const HOUR = 3_600_000;

/** Pick the entries of the window (or of one request and its neighbours), oldest first. */
export function selectEntries(
  entries: readonly TimelineEntry[],
  options: TimelineOptions = {},
): TimelineEntry[] {
  const since = options.since !== undefined ? Date.parse(options.since) : undefined;
  const inWindow = (e: TimelineEntry): boolean => since === undefined || time(e) >= since;
  const all = [...entries].filter((e) => Number.isFinite(time(e))).sort(compareEntries);
  // Where each request was posted: context for the thread filter, never an event of the draft.
  const postedIn = new Map<string, { channel?: string; threadTs?: string }>();
  for (const e of all) if (e.event === REQUEST_POSTED_EVENT) postedIn.set(e.requestId, e);
  let sorted = all.filter((e) => e.event !== REQUEST_POSTED_EVENT);
  const thread = options.thread;
  if (thread !== undefined) {
    const inThread = (where: { channel?: string; threadTs?: string } | undefined): boolean =>
      where?.channel === thread.channel && where.threadTs === thread.ts;
    sorted = sorted.filter(
      (e) => inThread(e) || (!isObservation(e) && e.requestId !== "" && inThread(postedIn.get(e.requestId))),
    );
  }
  if (options.requestId === undefined) return sorted.filter(inWindow);

  const observations = sorted.filter((e) => isObservation(e));
  sorted = sorted.filter((e) => !isObservation(e));
  const own = sorted.filter((e) => e.requestId === options.requestId);
  const first = own[0];
  const last = own[own.length - 1];
  if (!first || !last) return [];
  const targets = new Set(own.map((e) => e.target));
  const namespaces = new Set(own.flatMap((e) => namespaceOf(e.target) ?? []));
  const from = since ?? time(first) - (options.relatedBeforeMs ?? 2 * HOUR);
  const to = time(last) + (options.relatedAfterMs ?? 24 * HOUR);
  // A related request is taken whole (its lifecycle is not cut), when it started in the span.
  const starts = new Map<string, number>();
  for (const e of sorted) if (!starts.has(e.requestId)) starts.set(e.requestId, time(e));
  const related = new Set<string>([options.requestId]);
  for (const e of sorted) {
    if (related.has(e.requestId)) continue;
    const ns = namespaceOf(e.target);
    const start = starts.get(e.requestId) ?? time(e);
    if ((targets.has(e.target) || (ns !== undefined && namespaces.has(ns))) && start >= from && start <= to) {
      related.add(e.requestId);
    }
  }
  // The bot's observations about the same namespaces or targets in the span.
  const observed = observations.filter((e) => {
    const ns = namespaceOf(e.target);
    return (
      (targets.has(e.target) || (ns !== undefined && namespaces.has(ns))) &&
      time(e) >= from &&
      time(e) <= to &&
      inWindow(e)
    );
  });
  return [
    ...sorted.filter((e) => related.has(e.requestId) && (e.requestId === options.requestId || inWindow(e))),
    ...observed,
  ].sort(compareEntries);
}

/** The post-mortem draft, its people not yet named (see {@link draftText}). */
export function buildTimelineDraft(
  entries: readonly TimelineEntry[],
  options: TimelineOptions = {},
): TimelineDraft {
  // A diagnosis of a namespace that does not exist (a mistyped name) is no part of the incident: it
  // names nothing in the title, the summary or the evidence.
  const selected = selectEntries(entries, options).filter((e) => !isMissedDiagnosis(e));
  const first = selected[0];
  const last = selected[selected.length - 1];
  const multiDay = first !== undefined && last !== undefined && day(first.at) !== day(last.at);
  const draft: DraftScope = { selected, options, multiDay };
  const date = first ? day(first.at) : options.since ? day(options.since) : undefined;
  const lines: (string | DraftLine)[] = [
    ...headLines(draft, date),
    ...happenedLines(draft),
    ...timelineLines(draft),
    ...recoveryLines(draft),
    ...causeAndLessonLines(draft),
  ];
  return {
    lines: lines.map((l) => (typeof l === "string" ? [l] : l)),
    entries: selected.length,
    ...(date !== undefined ? { date } : {}),
  };
}

/** What each section is made from: the entries, the options, and whether times need their date. */
interface DraftScope {
  readonly selected: readonly TimelineEntry[];
  readonly options: TimelineOptions;
  readonly multiDay: boolean;
}

/** What the draft was made from, as its byline says: a thread, a request and its neighbours, or a window. */
function scopeOf(options: TimelineOptions): string {
  if (options.thread !== undefined)
    return `the Slack thread ${span(`${options.thread.channel}:${options.thread.ts}`, 60)}${options.since !== undefined ? ` since ${span(options.since, 40)}` : ""}`;
  if (options.requestId !== undefined)
    return `request ${span(options.requestId, 40)} and the requests about the same objects or namespace`;
  return options.since !== undefined ? `the audit log since ${span(options.since, 40)}` : "the audit log";
}

/** The title, the byline (what the draft covers) and a warning when only part of the stream was read. */
function headLines({ selected, options }: DraftScope, date: string | undefined): string[] {
  const first = selected[0];
  const last = selected[selected.length - 1];
  const namespaces = unique(selected.flatMap((e) => namespaceOf(e.target) ?? []));
  const subject =
    namespaces.length > 0
      ? `namespace ${namespaces.join(", ")}`
      : options.requestId !== undefined && first
        ? `request ${first.requestId.slice(0, 26)}`
        : "unstuck actions";
  const covered = first && last ? `, ${timeOf(first.at, true)} to ${timeOf(last.at, true)} UTC` : "";
  const lines = [
    `# Incident: ${subject}${date ? ` — ${date}` : ""}`,
    "",
    `_Draft generated by unstuck${options.generatedAt ? ` at ${timeOf(options.generatedAt, true)} UTC` : ""} from ${scopeOf(options)}: ${plural(selected.length, "audit entry", "audit entries")}${covered}. Check it and fill in the prompts before publishing._`,
  ];
  if (options.readBackTo !== undefined) {
    lines.push(
      "",
      `_Only the newest part of the audit stream was read (back to ${timeOf(options.readBackTo, true)} UTC); older events of this window are missing._`,
    );
  }
  return lines;
}

/** "What happened": the summary paragraph, or why there is nothing to summarise. */
function happenedLines({ selected, options }: DraftScope): (string | DraftLine)[] {
  const body =
    selected.length > 0
      ? summarise(selected)
      : options.requestId !== undefined
        ? `_No audit entries for request ${span(options.requestId, 40)}._`
        : options.thread !== undefined
          ? "_No audit entries for this thread: the bot requested, executed and observed nothing here._"
          : "_No audit entries in this window: the bot requested, approved and executed nothing._";
  return ["", "## What happened", "", body];
}

/** "Timeline (UTC)": one line per entry, who did what. */
function timelineLines({ selected, multiDay }: DraftScope): (string | DraftLine)[] {
  return [
    "",
    "## Timeline (UTC)",
    "",
    ...(selected.length === 0 ? ["_No events._"] : []),
    ...selected.map((e) => line`- ${timeOf(e.at, multiDay)} ${who(e.actor)} — ${describeEvent(e)}`),
  ];
}

/** "Recovery": what each execution ended with, then the bot's checks after it, then the prompt. */
function recoveryLines({ selected, multiDay }: DraftScope): string[] {
  const executions = requestsOf(selected).filter((r) => r.finish !== undefined);
  const lines = ["", "## Recovery", ""];
  for (const { created, finish } of executions) {
    if (!finish) continue;
    lines.push(
      `- ${timeOf(finish.at, multiDay)} ${actionPhrase(created ?? finish)} ${span(finish.target)}: ${outcomeOf(finish)}${finish.result ? ` — ${span(finish.result, 300)}` : ""}`,
    );
  }
  if (executions.length > 0) lines.push("");
  const checks = selected.filter(
    (e) =>
      e.event === `${OBSERVED_PREFIX}${ObservationKind.WaitFinished}` ||
      e.event === `${OBSERVED_PREFIX}${ObservationKind.PathRecheck}` ||
      (e.event === `${OBSERVED_PREFIX}${ObservationKind.OrphanCheck}` &&
        executions.some((r) => r.finish !== undefined && time(e) >= time(r.finish))),
  );
  if (checks.length > 0) {
    lines.push("How the bot verified it:", "");
    for (const e of checks) lines.push(`- ${timeOf(e.at, multiDay)} ${describeEvent(e)}`);
    lines.push("");
  }
  lines.push(
    `_to be written: what was done outside the bot (manual commands, Git fixes, re-syncs)${checks.length > 0 ? ", and any check made by hand" : ", and how recovery was verified (HTTP checks, DNS, orphan checks)"}._`,
  );
  return lines;
}

/** "Cause" (the diagnoses as evidence, the cause left to the humans) and "Lessons" with their prompts. */
function causeAndLessonLines({ selected, multiDay }: DraftScope): string[] {
  const lines = ["", "## Cause", ""];
  const evidence = selected.filter((e) => e.event === `${OBSERVED_PREFIX}${ObservationKind.Diagnosis}`);
  if (evidence.length > 0) {
    lines.push("What the bot's diagnoses found (evidence, not the cause):", "");
    for (const e of evidence)
      lines.push(`- ${timeOf(e.at, multiDay)} ${span(e.target, 100)}: ${span(e.result ?? "—", 300)}`);
    lines.push("");
  }
  lines.push(
    "_to be written: the root cause (what made the resources go away or stay stuck), and why it was not caught earlier._",
    "",
    "## Lessons",
    "",
    "_to be written: what to change (guards, checklists, ownership, monitoring) so this does not happen again, each with an owner._",
    "",
    ...lessonPrompts(selected),
  );
  return lines;
}

/** The "what happened" paragraph: per request, who asked for what, who voted, what ran and how it ended. */
function summarise(entries: readonly TimelineEntry[]): DraftLine {
  const sentences: (string | DraftLine)[] = [];
  const firstDiagnosis = entries.find((e) => e.event === `${OBSERVED_PREFIX}${ObservationKind.Diagnosis}`);
  if (firstDiagnosis) {
    sentences.push(
      `At ${timeOf(firstDiagnosis.at, false)} UTC the bot diagnosed ${span(firstDiagnosis.target, 100)}: ${span(firstDiagnosis.result ?? "—", 300)}.`,
    );
  }
  const requests = requestsOf(entries);
  for (const r of requests) {
    const head = r.created ?? r.entries[0];
    if (!head) continue;
    const what = `${actionPhrase(head)} ${span(head.target)}`;
    sentences.push(
      r.created
        ? line`At ${timeOf(r.created.at, false)} UTC ${who(r.created.actor)} requested the ${what} (request ${span(r.id, 40)})${r.created.result ? `, giving as reason ${span(r.created.result, 300)}` : ""}.`
        : `Request ${span(r.id, 40)} (the ${what}) was already open when this window starts.`,
    );
    const approvers = uniqueParts(
      r.entries.filter((e) => e.event === "vote.approve").map((e) => who(e.actor)),
    );
    const deniers = uniqueParts(r.entries.filter((e) => e.event === "vote.deny").map((e) => who(e.actor)));
    if (approvers.length > 0) sentences.push(line`${list(approvers)} approved it.`);
    if (deniers.length > 0) sentences.push(line`${list(deniers)} denied it.`);
    const cancelled = r.entries.find((e) => e.event === "request.cancelled");
    const expired = r.entries.find((e) => e.event === "request.expired");
    const tampered = r.entries.find((e) => e.event === "approval.tampered");
    if (r.finish) {
      sentences.push(
        `The bot executed it; at ${timeOf(r.finish.at, false)} UTC the outcome was ${outcomeOf(r.finish)}${r.finish.result ? ` (${span(r.finish.result, 300)})` : ""}.`,
      );
    } else if (tampered) {
      sentences.push("The bot refused to execute it: the approval record did not verify.");
    } else if (cancelled) {
      sentences.push(line`${who(cancelled.actor)} cancelled it.`);
    } else if (expired) {
      sentences.push("It expired without enough approvals.");
    } else if (r.entries.some((e) => e.event === "execution.claimed")) {
      sentences.push("Its execution had started; no outcome is recorded yet.");
    } else if (approvers.length > 0 && deniers.length === 0) {
      sentences.push("No execution outcome is recorded yet.");
    } else if (deniers.length === 0) {
      sentences.push("It was still waiting for approval at the end of the window.");
    }
  }
  const observed = entries.filter((e) => isObservation(e));
  if (observed.length > 0) {
    const kinds = unique(
      observed.map((e) => OBSERVATION_NOUNS[e.event.slice(OBSERVED_PREFIX.length)] ?? "other checks"),
    );
    sentences.push(
      line`The bot recorded ${plural(observed.length, "observation", "observations")} (${list(kinds)}), listed below.`,
    );
  }
  const people = uniqueParts(entries.flatMap((e) => (e.actor.kind === "user" ? [who(e.actor)] : [])));
  if (people.length > 0) sentences.push(line`People involved: ${list(people)}.`);
  return sentences.flatMap((sentence, i) => {
    const parts = typeof sentence === "string" ? [sentence] : sentence;
    return i === 0 ? parts : [" ", ...parts];
  });
}

interface RequestStory {
  readonly id: string;
  readonly entries: TimelineEntry[];
  created?: TimelineEntry;
  finish?: TimelineEntry;
}

const FINISH_EVENTS = new Set([
  "execution.done",
  "execution.failed",
  "execution.stale",
  "execution.tampered",
  "execution.requeue-limit",
]);

const OBSERVATION_NOUNS: Readonly<Record<string, string>> = {
  [ObservationKind.Diagnosis]: "diagnoses",
  [ObservationKind.PathCheck]: "path checks",
  [ObservationKind.OrphanCheck]: "orphan checks",
  [ObservationKind.WaitStarted]: "waits",
  [ObservationKind.WaitFinished]: "waits",
  [ObservationKind.PathRecheck]: "path re-checks",
};

/**
 * Questions for the lessons, from what this incident's events show (the seed incident's lessons, asked
 * rather than asserted): the humans answer them, the bot never claims a lesson.
 */
function lessonPrompts(entries: readonly TimelineEntry[]): string[] {
  const prompts: string[] = [];
  const filed = new Set(entries.filter((e) => e.event === "request.created").map((e) => e.action));
  const observed = (kind: ObservationKind): boolean =>
    entries.some((e) => e.event === `${OBSERVED_PREFIX}${kind}`);
  if (observed(ObservationKind.Diagnosis)) {
    prompts.push(
      "- _Prompt: how long was the namespace Terminating before someone read its remaining finalizers and blocking objects?_",
    );
  }
  // Each kind filed asks its own questions, in the table's order, once each.
  for (const [type, kind] of Object.entries(ACTION_KINDS)) {
    if (filed.has(type)) prompts.push(...kind.lessons(observed).filter((l) => !prompts.includes(l)));
  }
  if (observed(ObservationKind.PathRecheck) && !prompts.includes(PATH_LESSON)) prompts.push(PATH_LESSON);
  return prompts.length > 0 ? ["Questions this timeline raises:", "", ...prompts, ""] : [];
}

/** Entries grouped by request, in the order each request first appears (observations are not requests). */
function requestsOf(entries: readonly TimelineEntry[]): RequestStory[] {
  const byId = new Map<string, RequestStory>();
  for (const e of entries) {
    if (isObservation(e)) continue;
    let r = byId.get(e.requestId);
    if (!r) {
      r = { id: e.requestId, entries: [] };
      byId.set(e.requestId, r);
    }
    r.entries.push(e);
    if (e.event === "request.created" && !r.created) r.created = e;
    if (FINISH_EVENTS.has(e.event)) r.finish = e;
  }
  return [...byId.values()];
}

function outcomeOf(e: TimelineEntry): string {
  switch (e.event) {
    case "execution.done":
      return "**done**";
    case "execution.failed":
      return "**failed**";
    case "execution.stale":
      return "**stale** (the object changed after the approval; nothing was written)";
    case "execution.tampered":
      return "**refused** (the approval record did not verify)";
    case "execution.requeue-limit":
      return "**failed** (queued again and again, never started)";
    default:
      return span(e.event, 60);
  }
}

/** One timeline line's "what". */
export function describeEvent(e: TimelineEntry): string {
  const req = `request ${span(e.requestId, 40)}`;
  const target = span(e.target);
  const detail = e.result ? `: ${span(e.result, 300)}` : "";
  switch (e.event) {
    case "request.created":
      return `requested the ${actionPhrase(e)} ${target} (${req})${e.result ? `; reason ${span(e.result, 300)}` : ""}`;
    case "vote.approve":
      return `approved ${req}${e.after === "APPROVED" ? " — approvals complete" : ""}`;
    case "vote.deny":
      return `denied ${req}${detail}`;
    case "request.cancelled":
      return `cancelled ${req}`;
    case "request.expired":
      return `${req} expired unapproved${detail}`;
    case "execution.enqueued":
      return `queued the execution of ${req}`;
    case "execution.enqueue-failed":
      return `could not queue the execution of ${req}${detail}`;
    case "execution.requeued":
      return `queued the execution of ${req} again`;
    case "execution.claimed":
      return `started executing ${req} on ${target}${detail}`;
    case "execution.resumed":
      return `resumed executing ${req}${detail}`;
    case "approval.tampered":
      return `refused ${req}: the approval record did not verify${detail}`;
    case "approval.retired-key":
      return `refused ${req}: it was signed with a retired approval key${detail}`;
    case "execution.refused":
      return `refused to run ${req} again: it had already ended${detail}`;
    case `${OBSERVED_PREFIX}${ObservationKind.Diagnosis}`:
      return `diagnosed ${target}${detail}`;
    case `${OBSERVED_PREFIX}${ObservationKind.PathCheck}`:
      return `checked the traffic path of ${target}${detail}`;
    case `${OBSERVED_PREFIX}${ObservationKind.OrphanCheck}`:
      return `checked orphans of ${target}${detail}`;
    case `${OBSERVED_PREFIX}${ObservationKind.WaitStarted}`:
      return `started waiting: ${target}${detail}`;
    case `${OBSERVED_PREFIX}${ObservationKind.WaitFinished}`:
      return `finished waiting: ${target}${detail}`;
    case `${OBSERVED_PREFIX}${ObservationKind.PathRecheck}`:
      return `re-checked the traffic path of ${target}${detail}`;
    default:
      if (FINISH_EVENTS.has(e.event)) return `execution of ${req} ${outcomeOf(e)}${detail}`;
      return `${span(e.event, 60)} ${target} (${req})${moved(e)}${detail}`;
  }
}

function moved(e: TimelineEntry): string {
  return e.before || e.after ? ` (${span(e.before ?? "—", 20)} → ${span(e.after ?? "—", 20)})` : "";
}

/** What kind of change a request is, as a noun phrase before its target (its kind's timeline words). */
function actionPhrase(e: TimelineEntry): string {
  // The audit log is read back: an action type this build does not know is named as it was written.
  const kinds: Readonly<Record<string, { readonly timeline: string } | undefined>> = ACTION_KINDS;
  return kinds[e.action]?.timeline ?? `${span(e.action, 40)} on`;
}

/** A Slack user id as Slack issues them: only those become mentions. */
const USER_ID = /^[UW][A-Z0-9]{2,20}$/;

/** Who acted: a person for a Slack user id, a code span for anything else. */
export function who(actor: AuditActor): DraftPart {
  if (actor.kind === "user")
    return USER_ID.test(actor.userId) ? { person: actor.userId } : span(actor.userId, 40);
  return /^[a-z0-9-]{1,40}$/i.test(actor.component) ? `unstuck (${actor.component})` : "unstuck";
}

/**
 * Foreign text as plain text in any Markdown or Slack renderer: one inline code span, whose content
 * has no backtick (it would close the span), no line break or control character (it would start a
 * new line: a heading, a list item, a fence), and no angle bracket (Slack's `<!channel>`, `<@U…>`,
 * `<http…|…>` need one). Bounded to `max` characters.
 */
export function span(s: string, max = 200): string {
  let text = s
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, " ")
    .replace(/`/g, "ˋ")
    // A bracket pair Slack could read as markup (`<!here>`, `<@U…>`, `<http…|…>`) becomes look-alikes;
    // any other `<` too. A lone `>` opens nothing, so the user's `->` stays as typed.
    .replace(/<([^<>]*)>/g, "‹$1›")
    .replace(/</g, "‹")
    .replace(/\s+/g, " ")
    .trim();
  const chars = Array.from(text);
  if (chars.length > max) text = `${chars.slice(0, max - 1).join("")}…`;
  return text === "" ? "`—`" : `\`${text}\``;
}

/** A diagnosis observation that found no such namespace (its result starts with the verdict). */
function isMissedDiagnosis(e: TimelineEntry): boolean {
  return e.event === `${OBSERVED_PREFIX}${ObservationKind.Diagnosis}` && /^not-found\b/.test(e.result ?? "");
}

/** `myapp` from `Ingress myapp/myapp-worker-ingress` or `3 AWS orphans of namespace myapp`. */
export function namespaceOf(target: string): string | undefined {
  const m =
    /^[A-Za-z][A-Za-z0-9]* ([a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?)\/\S+$/.exec(target) ??
    /^namespace ([a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?)$/.exec(target) ??
    /\bof namespace ([a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?)$/.exec(target);
  return m?.[1];
}

function time(e: TimelineEntry): number {
  return Date.parse(e.at);
}

/** Oldest first; the stream id breaks ties (it is the append order). */
function compareEntries(a: TimelineEntry, b: TimelineEntry): number {
  const d = time(a) - time(b);
  if (d !== 0) return d;
  return compareStreamIds(a.streamId, b.streamId);
}

function compareStreamIds(a: string | undefined, b: string | undefined): number {
  if (a === undefined || b === undefined) return 0;
  const [am = 0, as = 0] = a.split("-").map(Number);
  const [bm = 0, bs = 0] = b.split("-").map(Number);
  return am - bm || as - bs;
}

function day(iso: string): string {
  const t = Date.parse(iso);
  return Number.isFinite(t) ? new Date(t).toISOString().slice(0, 10) : "unknown date";
}

/** `08:39:00`, or `2026-02-12 08:39:00` when the draft spans more than one UTC day. */
function timeOf(iso: string, withDate: boolean): string {
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return "??:??:??";
  return clock(t, { date: withDate, zone: false });
}

function unique<T>(xs: readonly T[]): T[] {
  return [...new Set(xs)];
}

/** Parts without repeats (a person once, however often they acted). */
function uniqueParts(xs: readonly DraftPart[]): DraftPart[] {
  const seen = new Set<string>();
  return xs.filter((x) => {
    const key = typeof x === "string" ? `t:${x}` : `p:${x.person}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** `a`, `a and b`, `a, b and c`. */
function list(xs: readonly DraftPart[]): DraftPart[] {
  if (xs.length <= 1) return [...xs];
  const out: DraftPart[] = [];
  xs.slice(0, -1).forEach((x, i) => out.push(...(i > 0 ? [", ", x] : [x])));
  const last = xs[xs.length - 1];
  if (last !== undefined) out.push(" and ", last);
  return out;
}
