/**
 * A Block Kit linter: what the local Slack console can render, and Slack's documented limits.
 *
 * The console (./console) renders only what this module accepts, and shows every problem it finds
 * on the message or modal itself (and at `GET /api/lint`), so the console doubles as a linter: a
 * card that would be refused by Slack (`invalid_blocks`) or silently cut is caught locally. Plain
 * data in, plain data out; it imports nothing from the product, so it judges the product's output
 * without sharing its assumptions.
 *
 * Limits (Slack's Block Kit reference): 50 blocks per message, 100 per modal; section text 3,000
 * characters, 10 fields of 2,000; header 150; button text 75, value 2,000, action_id 255, url 3,000;
 * confirm title 100, text 300, buttons 30; modal title/submit/close 24, private_metadata 3,000;
 * context 10 elements; actions 25 elements; checkboxes and radio buttons 10 options, select 100.
 */

/** One thing wrong with a message or a view. `path` is a JSON path into what was sent. */
export interface LintProblem {
  readonly path: string;
  readonly message: string;
  /** `error`: Slack refuses it or the console cannot render it; `warning`: accepted, but worse for readers. */
  readonly severity: "error" | "warning";
}

export const BLOCK_KIT_LIMITS = {
  messageBlocks: 50,
  modalBlocks: 100,
  messageText: 40_000,
  sectionText: 3_000,
  sectionFields: 10,
  fieldText: 2_000,
  headerText: 150,
  contextElements: 10,
  actionsElements: 25,
  buttonText: 75,
  buttonValue: 2_000,
  actionId: 255,
  blockId: 255,
  url: 3_000,
  confirmTitle: 100,
  confirmText: 300,
  confirmButton: 30,
  modalTitle: 24,
  modalButton: 24,
  privateMetadata: 3_000,
  callbackId: 255,
  inputLabel: 2_000,
  inputHint: 2_000,
  placeholder: 150,
  textInputLength: 3_000,
  optionText: 75,
  optionValue: 150,
  optionDescription: 75,
  checkboxOptions: 10,
  radioOptions: 10,
  selectOptions: 100,
} as const;

/** Block types the console renders. Anything else is reported (and drawn as an error box). */
export const RENDERED_BLOCK_TYPES = [
  "header",
  "section",
  "context",
  "divider",
  "actions",
  "input",
  "rich_text",
] as const;
/** Interactive and input elements the console renders. */
export const RENDERED_ELEMENT_TYPES = [
  "button",
  "static_select",
  "checkboxes",
  "radio_buttons",
  "plain_text_input",
] as const;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
/** Length as Slack counts it closely enough: code points. */
const len = (s: string): number => Array.from(s).length;

class Collector {
  public readonly problems: LintProblem[] = [];
  public error(path: string, message: string): void {
    this.problems.push({ path, message, severity: "error" });
  }
  public warning(path: string, message: string): void {
    this.problems.push({ path, message, severity: "warning" });
  }
  /** A string field: present when required, at most `max` characters. */
  public string(o: Obj, key: string, path: string, max: number, required = false): string | undefined {
    const v = o[key];
    if (v === undefined) {
      if (required) this.error(`${path}.${key}`, `${key} is required`);
      return undefined;
    }
    if (typeof v !== "string") {
      this.error(`${path}.${key}`, `${key} must be a string`);
      return undefined;
    }
    if (len(v) > max) this.error(`${path}.${key}`, `${key} is ${len(v)} characters; the limit is ${max}`);
    return v;
  }
  /** A text object (`plain_text`, or `mrkdwn` when allowed), its text at most `max` characters. */
  public text(
    v: unknown,
    path: string,
    max: number,
    what: string,
    kinds: readonly string[] = ["plain_text", "mrkdwn"],
  ): void {
    if (!isObj(v)) {
      this.error(path, `${what} must be a text object`);
      return;
    }
    if (typeof v["type"] !== "string" || !kinds.includes(v["type"])) {
      this.error(`${path}.type`, `${what} must be ${kinds.join(" or ")}, not ${JSON.stringify(v["type"])}`);
    }
    const t = v["text"];
    if (typeof t !== "string" || t.length === 0) {
      this.error(`${path}.text`, `${what} has no text`);
      return;
    }
    if (len(t) > max) this.error(`${path}.text`, `${what} is ${len(t)} characters; the limit is ${max}`);
  }
}

/** Problems of a message as posted (`chat.postMessage`, `chat.update`, `chat.postEphemeral`, a response). */
export function lintMessage(message: { readonly text?: unknown; readonly blocks?: unknown }): LintProblem[] {
  const c = new Collector();
  const text = message.text;
  if (text !== undefined && typeof text !== "string") c.error("text", "text must be a string");
  if (typeof text === "string" && len(text) > BLOCK_KIT_LIMITS.messageText) {
    c.error("text", `text is ${len(text)} characters; Slack truncates at ${BLOCK_KIT_LIMITS.messageText}`);
  }
  if (message.blocks !== undefined) {
    lintBlocks(c, message.blocks, "blocks", "message");
    const hasText = typeof text === "string" && text.trim().length > 0;
    if (Array.isArray(message.blocks) && message.blocks.length > 0 && !hasText) {
      c.warning("text", "no fallback text: notifications and screen readers show nothing useful");
    }
  } else if (typeof text !== "string" || text.length === 0) {
    c.error("text", "a message needs text or blocks");
  }
  return c.problems;
}

/** Problems of a modal view (`views.open`). */
export function lintView(view: unknown): LintProblem[] {
  const c = new Collector();
  if (!isObj(view)) {
    c.error("view", "a view must be an object");
    return c.problems;
  }
  if (view["type"] !== "modal")
    c.error("view.type", `the console renders modals only, not ${String(view["type"])}`);
  c.text(view["title"], "view.title", BLOCK_KIT_LIMITS.modalTitle, "the title", ["plain_text"]);
  if (view["submit"] !== undefined) {
    c.text(view["submit"], "view.submit", BLOCK_KIT_LIMITS.modalButton, "the submit button", ["plain_text"]);
  }
  if (view["close"] !== undefined) {
    c.text(view["close"], "view.close", BLOCK_KIT_LIMITS.modalButton, "the close button", ["plain_text"]);
  }
  c.string(view, "private_metadata", "view", BLOCK_KIT_LIMITS.privateMetadata);
  c.string(view, "callback_id", "view", BLOCK_KIT_LIMITS.callbackId);
  lintBlocks(c, view["blocks"], "view.blocks", "modal");
  const blocks = Array.isArray(view["blocks"]) ? view["blocks"] : [];
  if (blocks.some((b) => isObj(b) && b["type"] === "input") && view["submit"] === undefined) {
    c.error("view.submit", "a modal with input blocks needs a submit button");
  }
  return c.problems;
}

/** Lint blocks on their own, e.g. for `POST /api/lint`. */
export function lintBlockList(blocks: unknown, surface: "message" | "modal" = "message"): LintProblem[] {
  const c = new Collector();
  lintBlocks(c, blocks, "blocks", surface);
  return c.problems;
}

function lintBlocks(c: Collector, blocks: unknown, path: string, surface: "message" | "modal"): void {
  if (!Array.isArray(blocks)) {
    c.error(path, "blocks must be an array");
    return;
  }
  const max = surface === "modal" ? BLOCK_KIT_LIMITS.modalBlocks : BLOCK_KIT_LIMITS.messageBlocks;
  if (blocks.length > max) c.error(path, `${blocks.length} blocks; a ${surface} holds at most ${max}`);
  const blockIds = new Set<string>();
  blocks.forEach((block, i) => {
    const p = `${path}[${i}]`;
    if (!isObj(block)) {
      c.error(p, "a block must be an object");
      return;
    }
    const id = c.string(block, "block_id", p, BLOCK_KIT_LIMITS.blockId);
    if (id !== undefined) {
      if (blockIds.has(id)) c.error(`${p}.block_id`, `block_id "${id}" is used twice`);
      blockIds.add(id);
    }
    lintBlock(c, block, p, surface);
  });
}

function lintBlock(c: Collector, b: Obj, p: string, surface: "message" | "modal"): void {
  const L = BLOCK_KIT_LIMITS;
  switch (b["type"]) {
    case "header":
      c.text(b["text"], `${p}.text`, L.headerText, "header text", ["plain_text"]);
      return;
    case "divider":
      return;
    case "section": {
      if (b["text"] === undefined && b["fields"] === undefined) c.error(p, "a section needs text or fields");
      if (b["text"] !== undefined) c.text(b["text"], `${p}.text`, L.sectionText, "section text");
      if (b["fields"] !== undefined) {
        const fields = b["fields"];
        if (!Array.isArray(fields)) c.error(`${p}.fields`, "fields must be an array");
        else {
          if (fields.length > L.sectionFields) {
            c.error(`${p}.fields`, `${fields.length} fields; the limit is ${L.sectionFields}`);
          }
          fields.forEach((f, i) => c.text(f, `${p}.fields[${i}]`, L.fieldText, "a field"));
        }
      }
      if (b["accessory"] !== undefined) lintElement(c, b["accessory"], `${p}.accessory`, new Set());
      return;
    }
    case "context": {
      const elements = b["elements"];
      if (!Array.isArray(elements) || elements.length === 0) {
        c.error(`${p}.elements`, "a context needs elements");
        return;
      }
      if (elements.length > L.contextElements) {
        c.error(`${p}.elements`, `${elements.length} elements; the limit is ${L.contextElements}`);
      }
      elements.forEach((e, i) => {
        const ep = `${p}.elements[${i}]`;
        if (isObj(e) && e["type"] === "image") {
          c.string(e, "alt_text", ep, 2_000, true);
          return;
        }
        c.text(e, ep, L.sectionText, "context text");
      });
      return;
    }
    case "actions": {
      const elements = b["elements"];
      if (!Array.isArray(elements) || elements.length === 0) {
        c.error(`${p}.elements`, "an actions block needs elements");
        return;
      }
      if (elements.length > L.actionsElements) {
        c.error(`${p}.elements`, `${elements.length} elements; the limit is ${L.actionsElements}`);
      }
      const actionIds = new Set<string>();
      elements.forEach((e, i) => lintElement(c, e, `${p}.elements[${i}]`, actionIds));
      return;
    }
    case "input": {
      if (surface !== "modal") c.warning(p, "input blocks belong in modals");
      c.text(b["label"], `${p}.label`, L.inputLabel, "the label", ["plain_text"]);
      if (b["hint"] !== undefined) c.text(b["hint"], `${p}.hint`, L.inputHint, "the hint", ["plain_text"]);
      if (b["element"] === undefined) c.error(`${p}.element`, "an input needs an element");
      else lintElement(c, b["element"], `${p}.element`, new Set());
      return;
    }
    case "rich_text":
      lintRichText(c, b["elements"], `${p}.elements`);
      return;
    default:
      c.error(`${p}.type`, `unknown block type ${JSON.stringify(b["type"])}: the console cannot render it`);
  }
}

function lintElement(c: Collector, e: unknown, p: string, actionIds: Set<string>): void {
  const L = BLOCK_KIT_LIMITS;
  if (!isObj(e)) {
    c.error(p, "an element must be an object");
    return;
  }
  const actionId = c.string(e, "action_id", p, L.actionId);
  if (actionId !== undefined) {
    if (actionIds.has(actionId))
      c.error(`${p}.action_id`, `action_id "${actionId}" is used twice in one block`);
    actionIds.add(actionId);
  }
  switch (e["type"]) {
    case "button":
      c.text(e["text"], `${p}.text`, L.buttonText, "button text", ["plain_text"]);
      c.string(e, "value", p, L.buttonValue);
      c.string(e, "url", p, L.url);
      if (e["style"] !== undefined && e["style"] !== "primary" && e["style"] !== "danger") {
        c.error(`${p}.style`, `style must be primary or danger, not ${JSON.stringify(e["style"])}`);
      }
      if (e["confirm"] !== undefined) lintConfirm(c, e["confirm"], `${p}.confirm`);
      return;
    case "plain_text_input": {
      if (e["placeholder"] !== undefined) {
        c.text(e["placeholder"], `${p}.placeholder`, L.placeholder, "the placeholder", ["plain_text"]);
      }
      for (const key of ["min_length", "max_length"]) {
        const v = e[key];
        if (v !== undefined && (typeof v !== "number" || v < 0 || v > L.textInputLength)) {
          c.error(`${p}.${key}`, `${key} must be a number from 0 to ${L.textInputLength}`);
        }
      }
      c.string(e, "initial_value", p, L.textInputLength);
      return;
    }
    case "checkboxes":
      lintOptions(c, e["options"], `${p}.options`, L.checkboxOptions, true);
      return;
    case "radio_buttons":
      lintOptions(c, e["options"], `${p}.options`, L.radioOptions, true);
      return;
    case "static_select":
      if (e["placeholder"] !== undefined) {
        c.text(e["placeholder"], `${p}.placeholder`, L.placeholder, "the placeholder", ["plain_text"]);
      }
      if (e["option_groups"] !== undefined) {
        c.error(`${p}.option_groups`, "option_groups: the console cannot render them");
      } else lintOptions(c, e["options"], `${p}.options`, L.selectOptions, false);
      if (e["confirm"] !== undefined) lintConfirm(c, e["confirm"], `${p}.confirm`);
      return;
    default:
      c.error(`${p}.type`, `unknown element type ${JSON.stringify(e["type"])}: the console cannot render it`);
  }
}

function lintOptions(c: Collector, options: unknown, p: string, max: number, mrkdwn: boolean): void {
  const L = BLOCK_KIT_LIMITS;
  if (!Array.isArray(options) || options.length === 0) {
    c.error(p, "options must be a non-empty array");
    return;
  }
  if (options.length > max) c.error(p, `${options.length} options; the limit is ${max}`);
  const values = new Set<string>();
  options.forEach((o, i) => {
    const op = `${p}[${i}]`;
    if (!isObj(o)) {
      c.error(op, "an option must be an object");
      return;
    }
    c.text(
      o["text"],
      `${op}.text`,
      L.optionText,
      "option text",
      mrkdwn ? ["plain_text", "mrkdwn"] : ["plain_text"],
    );
    const value = c.string(o, "value", op, L.optionValue, true);
    if (value !== undefined) {
      if (values.has(value)) c.error(`${op}.value`, `option value "${value}" is used twice`);
      values.add(value);
    }
    if (o["description"] !== undefined) {
      c.text(o["description"], `${op}.description`, L.optionDescription, "option description");
    }
  });
}

function lintConfirm(c: Collector, v: unknown, p: string): void {
  const L = BLOCK_KIT_LIMITS;
  if (!isObj(v)) {
    c.error(p, "confirm must be an object");
    return;
  }
  c.text(v["title"], `${p}.title`, L.confirmTitle, "the confirm title", ["plain_text"]);
  c.text(v["text"], `${p}.text`, L.confirmText, "the confirm text");
  c.text(v["confirm"], `${p}.confirm`, L.confirmButton, "the confirm button", ["plain_text"]);
  c.text(v["deny"], `${p}.deny`, L.confirmButton, "the deny button", ["plain_text"]);
  if (v["style"] !== undefined && v["style"] !== "primary" && v["style"] !== "danger") {
    c.error(`${p}.style`, `style must be primary or danger, not ${JSON.stringify(v["style"])}`);
  }
}

const RICH_CONTAINERS = ["rich_text_section", "rich_text_list", "rich_text_preformatted", "rich_text_quote"];
const RICH_LEAVES = ["text", "link", "emoji", "user", "channel", "usergroup", "broadcast", "date"];

function lintRichText(c: Collector, elements: unknown, p: string, depth = 0): void {
  if (!Array.isArray(elements)) {
    c.error(p, "rich_text elements must be an array");
    return;
  }
  elements.forEach((e, i) => {
    const ep = `${p}[${i}]`;
    if (!isObj(e)) {
      c.error(ep, "a rich text element must be an object");
      return;
    }
    const type = e["type"];
    if (typeof type === "string" && RICH_CONTAINERS.includes(type) && depth < 2) {
      lintRichText(c, e["elements"], `${ep}.elements`, depth + 1);
    } else if (typeof type === "string" && RICH_LEAVES.includes(type) && depth > 0) {
      if (type === "text") c.string(e, "text", ep, BLOCK_KIT_LIMITS.sectionText, true);
    } else {
      c.error(
        `${ep}.type`,
        `unknown rich text element ${JSON.stringify(type)}: the console cannot render it`,
      );
    }
  });
}
