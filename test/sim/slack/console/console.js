/* global document, window, fetch, EventSource, localStorage, setTimeout, clearTimeout, setInterval, URL */
/**
 * The local Slack console's page: renders the bot's Block Kit as Slack would and sends what Slack
 * sends (through the console server, which signs it). No framework, no build step.
 *
 * Safety: nothing from a message ever becomes HTML. Every string reaches the page through
 * `textContent` or an attribute the page sets itself (links only for http(s)/mailto URLs); the
 * server's Content-Security-Policy forbids any script but this file besides.
 *
 * Every request that acts sends the token the server put in this page (`X-Console-Token`) as
 * `application/json`: the server refuses anything else, so no other site can act through it.
 */

const $ = (id) => document.getElementById(id);
/** This page's token, put in by the server when it served the page; every POST carries it. */
const CONSOLE_TOKEN = document.querySelector('meta[name="console-token"]')?.getAttribute("content") ?? "";
const state = {
  data: undefined,
  user: undefined,
  openViewId: undefined,
  openViewKey: undefined,
  version: "",
};

// ---------------------------------------------------------------------------------------------
// DOM helpers
// ---------------------------------------------------------------------------------------------

/** An element with attributes (strings only, set as attributes) and children (nodes or text). */
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(typeof c === "string" ? document.createTextNode(c) : c);
  }
  return el;
}

function toast(text) {
  const t = $("toast");
  t.textContent = text;
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => (t.hidden = true), 4000);
}

async function api(path, body) {
  const res = await fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json", "x-console-token": CONSOLE_TOKEN },
    body: JSON.stringify(body),
  });
  const answer = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(answer.error ?? `HTTP ${res.status}`);
  if (answer.status !== undefined && answer.status !== 200) {
    toast(`Slack would say: the app did not respond (HTTP ${answer.status})`);
  }
  return answer;
}

// ---------------------------------------------------------------------------------------------
// mrkdwn
// ---------------------------------------------------------------------------------------------

const EMOJI = {
  warning: "⚠️",
  white_check_mark: "✅",
  large_green_circle: "🟢",
  large_yellow_circle: "🟡",
  large_orange_circle: "🟠",
  red_circle: "🔴",
  white_circle: "⚪",
  no_entry_sign: "🚫",
  no_entry: "⛔",
  grey_question: "❔",
  x: "❌",
  rotating_light: "🚨",
  information_source: "ℹ️",
  alarm_clock: "⏰",
  wrench: "🔧",
  satellite_antenna: "📡",
  raising_hand: "🙋",
  mag: "🔍",
  hourglass_flowing_sand: "⏳",
  hourglass: "⌛",
  heavy_multiplication_x: "✖️",
  ghost: "👻",
  gear: "⚙️",
  eyes: "👀",
  broom: "🧹",
  heavy_check_mark: "✔️",
  lock: "🔒",
  bulb: "💡",
  link: "🔗",
  memo: "📝",
};

/** Slack escapes only these three in mrkdwn. */
function unescape(text) {
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

function emojify(text) {
  return text.replace(/:([a-z0-9_+-]+):/g, (m, name) => EMOJI[name] ?? m);
}

function userName(id) {
  const u = state.data?.users.find((x) => x.id === id);
  return u ? u.name : id;
}

const pad = (n) => String(n).padStart(2, "0");

/** `<!date^epoch^format|fallback>` as Slack renders it, in the viewer's time zone. */
function formatDate(epoch, format, fallback) {
  const d = new Date(Number(epoch) * 1000);
  if (Number.isNaN(d.getTime())) return fallback;
  const seconds = Math.round((Date.now() - d.getTime()) / 1000);
  const ago =
    Math.abs(seconds) < 60
      ? seconds >= 0
        ? "just now"
        : "in a moment"
      : Math.abs(seconds) < 3600
        ? `${Math.round(Math.abs(seconds) / 60)} minutes ${seconds >= 0 ? "ago" : "from now"}`
        : Math.abs(seconds) < 86400
          ? `${Math.round(Math.abs(seconds) / 3600)} hours ${seconds >= 0 ? "ago" : "from now"}`
          : `${Math.round(Math.abs(seconds) / 86400)} days ${seconds >= 0 ? "ago" : "from now"}`;
  const date = d.toLocaleDateString("en-US", { year: "numeric", month: "long", day: "numeric" });
  const short = d.toLocaleDateString("en-US", { year: "numeric", month: "short", day: "numeric" });
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  const tokens = {
    date_num: `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`,
    date,
    date_short: short,
    date_long: d.toLocaleDateString("en-US", {
      weekday: "long",
      year: "numeric",
      month: "long",
      day: "numeric",
    }),
    date_pretty: date,
    date_short_pretty: short,
    date_long_pretty: date,
    time,
    time_secs: `${time}:${pad(d.getSeconds())}`,
    ago,
  };
  return format.replace(/\{([a-z_]+)\}/g, (m, name) => tokens[name] ?? m);
}

/** A `<…>` control sequence: link, mention, channel, special mention, date. */
function controlSequence(inner) {
  const [target, label] = splitOnce(inner, "|");
  if (target.startsWith("@"))
    return h("span", { class: "mention" }, `@${label ?? userName(target.slice(1))}`);
  if (target.startsWith("#")) return h("span", { class: "mention" }, `#${label ?? target.slice(1)}`);
  if (target.startsWith("!date^")) {
    const [, epoch, format] = target.split("^");
    return h(
      "span",
      { class: "date", title: unescape(label ?? "") },
      formatDate(epoch, format ?? "", label ?? ""),
    );
  }
  if (target.startsWith("!subteam^")) return h("span", { class: "mention" }, label ?? "@group");
  if (target.startsWith("!")) return h("span", { class: "mention" }, `@${target.slice(1)}`);
  const url = unescape(target);
  const text = unescape(label ?? target);
  if (/^(https?:|mailto:)/i.test(url))
    return h("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, text);
  return document.createTextNode(text);
}

function splitOnce(s, sep) {
  const i = s.indexOf(sep);
  return i < 0 ? [s, undefined] : [s.slice(0, i), s.slice(i + 1)];
}

const INLINE =
  /`([^`\n]+)`|<([^<>\n]+)>|(?<![\p{L}\p{N}*])\*(?!\s)([^*\n]+?)\*(?![\p{L}\p{N}*])|(?<![\p{L}\p{N}_])_(?!\s)([^_\n]+?)_(?![\p{L}\p{N}_])|(?<![\p{L}\p{N}~])~(?!\s)([^~\n]+?)~(?![\p{L}\p{N}~])/gu;

/** Inline mrkdwn of one line: code, control sequences, bold, italic, strike (nested). */
function inline(text) {
  const out = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) out.push(emojify(unescape(text.slice(last, m.index))));
    if (m[1] !== undefined) out.push(h("code", {}, unescape(m[1])));
    else if (m[2] !== undefined) out.push(controlSequence(m[2]));
    else if (m[3] !== undefined) out.push(h("b", {}, ...inline(m[3])));
    else if (m[4] !== undefined) out.push(h("i", {}, ...inline(m[4])));
    else if (m[5] !== undefined) out.push(h("s", {}, ...inline(m[5])));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(emojify(unescape(text.slice(last))));
  return out;
}

/** A mrkdwn string as DOM: ``` blocks, > quotes, then inline formatting line by line. */
function mrkdwn(text) {
  const root = h("div", { class: "mrkdwn" });
  const parts = String(text).split("```");
  parts.forEach((part, i) => {
    if (i % 2 === 1 && i < parts.length - 1) {
      // Inside a code block control sequences show as their text, nothing else is formatted.
      root.append(
        h(
          "pre",
          {},
          unescape(part.replace(/^\n/, "").replace(/<([^<>\n]+)>/g, (m, s) => splitOnce(s, "|")[1] ?? s)),
        ),
      );
      return;
    }
    const chunk = i % 2 === 1 ? "```" + part : part;
    const lines = chunk.split("\n");
    lines.forEach((line, j) => {
      const quote = /^(&gt;|>)\s?/.exec(line);
      if (quote) root.append(h("blockquote", {}, ...inline(line.slice(quote[0].length))));
      else {
        root.append(...inline(line));
        if (j < lines.length - 1) root.append("\n");
      }
    });
  });
  return root;
}

/** A text object: mrkdwn formatted, plain_text as it is (emoji shortcodes replaced). */
function textObject(t, cls) {
  if (!t || typeof t.text !== "string") return h("span", { class: cls });
  if (t.type === "mrkdwn") {
    const el = mrkdwn(t.text);
    if (cls) el.classList.add(cls);
    return el;
  }
  return h("span", { class: cls }, t.emoji === false ? t.text : emojify(t.text));
}

const plain = (t) => (t && typeof t.text === "string" ? t.text : "");

// ---------------------------------------------------------------------------------------------
// Block Kit
// ---------------------------------------------------------------------------------------------

function problemsBox(problems) {
  if (!problems || problems.length === 0) return undefined;
  const errors = problems.filter((p) => p.severity === "error");
  const cls = errors.length > 0 ? "bk-error bk-lint" : "bk-error bk-warning bk-lint";
  return h(
    "div",
    { class: cls, role: "alert" },
    h(
      "b",
      {},
      errors.length > 0 ? "Block Kit errors (Slack would refuse or cut this)" : "Block Kit warnings",
    ),
    h(
      "ul",
      {},
      problems.map((p) => h("li", {}, h("code", {}, p.path), ` ${p.message}`)),
    ),
  );
}

function unrenderable(what) {
  return h("div", { class: "bk-error bk-unrenderable" }, `The console cannot render ${what}`);
}

/** `ctx`: { surface: "message" | "modal", msg?, errors? } */
function renderBlocks(blocks, ctx) {
  const out = [];
  if (!Array.isArray(blocks)) return out;
  for (const b of blocks) {
    if (!b || typeof b !== "object") {
      out.push(unrenderable("a block that is not an object"));
      continue;
    }
    out.push(renderBlock(b, ctx));
  }
  return out;
}

function renderBlock(b, ctx) {
  switch (b.type) {
    case "header":
      return h("div", { class: "bk-header" }, textObject(b.text));
    case "divider":
      return h("hr", { class: "bk-divider" });
    case "section": {
      const main = h("div", { class: "bk-section-main" });
      if (b.text) main.append(textObject(b.text, "bk-text"));
      if (Array.isArray(b.fields))
        main.append(
          h(
            "div",
            { class: "bk-fields" },
            b.fields.map((f) => textObject(f, "bk-field")),
          ),
        );
      const el = h("div", { class: "bk-section" }, main);
      if (b.accessory) el.append(renderElement(b.accessory, b, ctx));
      return el;
    }
    case "context":
      return h(
        "div",
        { class: "bk-context" },
        (b.elements ?? []).map((e) =>
          e.type === "image"
            ? h("span", { class: "bk-image" }, `[image: ${e.alt_text ?? ""}]`)
            : textObject(e),
        ),
      );
    case "actions":
      return h(
        "div",
        { class: "bk-actions" },
        (b.elements ?? []).map((e) => renderElement(e, b, ctx)),
      );
    case "input":
      return renderInput(b, ctx);
    case "rich_text":
      return h("div", { class: "rich" }, (b.elements ?? []).map(richContainer));
    default:
      return unrenderable(`block type "${String(b.type)}"`);
  }
}

function richContainer(e) {
  switch (e.type) {
    case "rich_text_section":
      return h("div", {}, (e.elements ?? []).map(richLeaf));
    case "rich_text_preformatted":
      return h("pre", {}, (e.elements ?? []).map(richLeaf));
    case "rich_text_quote":
      return h("blockquote", {}, (e.elements ?? []).map(richLeaf));
    case "rich_text_list":
      return h(
        e.style === "ordered" ? "ol" : "ul",
        {},
        (e.elements ?? []).map((s) => h("li", {}, (s.elements ?? []).map(richLeaf))),
      );
    default:
      return unrenderable(`rich text element "${String(e.type)}"`);
  }
}

function richLeaf(e) {
  let node;
  switch (e.type) {
    case "text":
      node = document.createTextNode(e.text ?? "");
      break;
    case "link":
      node = /^(https?:|mailto:)/i.test(e.url ?? "")
        ? h("a", { href: e.url, target: "_blank", rel: "noopener noreferrer" }, e.text ?? e.url)
        : document.createTextNode(e.text ?? e.url ?? "");
      break;
    case "emoji":
      node = document.createTextNode(EMOJI[e.name] ?? `:${e.name}:`);
      break;
    case "user":
      node = h("span", { class: "mention" }, `@${userName(e.user_id)}`);
      break;
    case "channel":
      node = h("span", { class: "mention" }, `#${e.channel_id}`);
      break;
    case "usergroup":
      node = h("span", { class: "mention" }, `@${e.usergroup_id}`);
      break;
    case "broadcast":
      node = h("span", { class: "mention" }, `@${e.range}`);
      break;
    case "date":
      node = document.createTextNode(formatDate(e.timestamp, e.format ?? "{date}", e.fallback ?? ""));
      break;
    default:
      return unrenderable(`rich text element "${String(e.type)}"`);
  }
  const st = e.style ?? {};
  if (st.code) node = h("code", {}, node);
  if (st.bold) node = h("b", {}, node);
  if (st.italic) node = h("i", {}, node);
  if (st.strike) node = h("s", {}, node);
  return node;
}

function renderElement(e, block, ctx) {
  if (!e || typeof e !== "object") return unrenderable("an element that is not an object");
  switch (e.type) {
    case "button": {
      const btn = h(
        "button",
        { class: `bk-button ${e.style ?? ""}`.trim(), type: "button", "data-action-id": e.action_id ?? "" },
        emojify(plain(e.text)),
      );
      if (e.url && /^https?:/i.test(e.url)) btn.title = e.url;
      btn.addEventListener("click", () =>
        withConfirm(e.confirm, () =>
          sendAction(btn, ctx.msg, {
            actionId: e.action_id ?? "",
            value: e.value ?? "",
            blockId: block.block_id,
          }),
        ),
      );
      return btn;
    }
    case "static_select":
    case "radio_buttons":
    case "checkboxes":
    case "plain_text_input":
      if (ctx.surface === "message" && e.type === "static_select") {
        const sel = h(
          "select",
          { class: "bk-select" },
          h("option", { value: "" }, plain(e.placeholder) || "Select…"),
          (e.options ?? []).map((o) => h("option", { value: o.value }, plain(o.text))),
        );
        sel.addEventListener("change", () =>
          withConfirm(e.confirm, () =>
            sendAction(sel, ctx.msg, {
              actionId: e.action_id ?? "",
              value: sel.value,
              blockId: block.block_id,
            }),
          ),
        );
        return sel;
      }
      return unrenderable(`a ${e.type} outside a modal input`);
    default:
      return unrenderable(`element type "${String(e.type)}"`);
  }
}

/** Slack's "are you sure?" dialog of a button's `confirm` object. */
function withConfirm(confirm, go) {
  if (!confirm) {
    go();
    return;
  }
  const root = $("confirm-root");
  const close = () => root.replaceChildren();
  const yes = h(
    "button",
    { type: "button", class: `submit ${confirm.style === "danger" ? "danger" : ""}`, "data-confirm": "yes" },
    plain(confirm.confirm) || "Yes",
  );
  const no = h("button", { type: "button", "data-confirm": "no" }, plain(confirm.deny) || "Cancel");
  yes.addEventListener("click", () => {
    close();
    go();
  });
  no.addEventListener("click", close);
  root.replaceChildren(
    h(
      "div",
      { class: "overlay confirm" },
      h(
        "div",
        { class: "dialog", role: "dialog", "aria-label": plain(confirm.title) },
        h("h2", {}, plain(confirm.title)),
        textObject(confirm.text),
        h("div", { class: "dialog-buttons" }, no, yes),
      ),
    ),
  );
}

async function sendAction(el, msg, action) {
  el.disabled = true;
  try {
    await api("/api/action", { user: state.user, ts: msg?.ts ?? "", ...action });
  } catch (err) {
    toast(String(err.message ?? err));
  } finally {
    el.disabled = false;
  }
}

// ---------------------------------------------------------------------------------------------
// Modals
// ---------------------------------------------------------------------------------------------

function renderInput(b, ctx) {
  const e = b.element ?? {};
  const id = `in-${b.block_id}-${e.action_id}`;
  const wrap = h("div", {
    class: "bk-input",
    "data-block-id": b.block_id ?? "",
    "data-action-id": e.action_id ?? "",
    "data-type": e.type ?? "",
  });
  wrap.append(
    h(
      "label",
      { class: "label", for: id },
      plain(b.label),
      b.optional ? h("span", { class: "optional" }, " (optional)") : undefined,
    ),
  );
  let control;
  switch (e.type) {
    case "plain_text_input":
      control = e.multiline ? h("textarea", { id }) : h("input", { id, type: "text" });
      if (e.placeholder) control.placeholder = plain(e.placeholder);
      if (e.initial_value) control.value = e.initial_value;
      if (e.max_length) control.maxLength = e.max_length;
      break;
    case "checkboxes":
      control = h(
        "div",
        { id, class: "bk-checkboxes" },
        (e.options ?? []).map((o) => {
          const box = h("input", { type: "checkbox", value: o.value });
          if ((e.initial_options ?? []).some((i) => i.value === o.value)) box.checked = true;
          return h(
            "label",
            { class: "bk-option" },
            box,
            " ",
            textObject(o.text),
            o.description ? h("div", { class: "hint" }, plain(o.description)) : undefined,
          );
        }),
      );
      break;
    case "radio_buttons":
      control = h(
        "div",
        { id, class: "bk-radios" },
        (e.options ?? []).map((o) =>
          h(
            "label",
            { class: "bk-option" },
            h("input", { type: "radio", name: id, value: o.value }),
            " ",
            textObject(o.text),
          ),
        ),
      );
      break;
    case "static_select":
      control = h(
        "select",
        { id },
        h("option", { value: "" }, plain(e.placeholder) || "Select an option"),
        (e.options ?? []).map((o) => h("option", { value: o.value }, plain(o.text))),
      );
      if (e.initial_option) control.value = e.initial_option.value;
      break;
    default:
      wrap.append(unrenderable(`input element "${String(e.type)}"`));
      return wrap;
  }
  wrap.append(control);
  if (b.hint) wrap.append(h("div", { class: "hint" }, plain(b.hint)));
  const error = ctx.errors?.[b.block_id];
  if (error) {
    wrap.classList.add("has-error");
    wrap.append(h("div", { class: "input-error", role: "alert" }, String(error)));
  }
  return wrap;
}

/** What the user entered, as `block_id → action_id → value` (checkboxes: values; select: value). */
function readInputs(dialog) {
  const values = {};
  for (const w of dialog.querySelectorAll(".bk-input")) {
    const type = w.dataset.type;
    let v;
    if (type === "checkboxes")
      v = [...w.querySelectorAll("input[type=checkbox]:checked")].map((i) => i.value);
    else if (type === "radio_buttons") v = w.querySelector("input[type=radio]:checked")?.value ?? null;
    else if (type === "static_select") v = w.querySelector("select").value || null;
    else v = w.querySelector("input, textarea")?.value ?? "";
    values[w.dataset.blockId] = { [w.dataset.actionId]: v };
  }
  return values;
}

/** Slack checks required inputs and lengths in the client before anything is sent. */
function clientErrors(view, values) {
  const errors = {};
  for (const b of view.blocks ?? []) {
    if (b.type !== "input") continue;
    const v = values[b.block_id]?.[b.element?.action_id];
    const empty = v === null || v === "" || (Array.isArray(v) && v.length === 0);
    if (empty && !b.optional) errors[b.block_id] = "Please complete this required field.";
    else if (typeof v === "string" && v && b.element?.min_length && [...v].length < b.element.min_length) {
      errors[b.block_id] = `Please enter at least ${b.element.min_length} characters.`;
    }
  }
  return errors;
}

function renderModal() {
  const root = $("modal-root");
  const views = (state.data?.views ?? []).filter(
    (v) => v.openedBy === undefined || v.openedBy === state.user,
  );
  const open = views.at(-1);
  if (!open) {
    state.openViewId = undefined;
    state.openViewKey = undefined;
    root.replaceChildren();
    return;
  }
  // Keep what is being typed; repaint only another modal, or this one updated (`views.update`).
  const key = `${open.viewId} ${JSON.stringify(open.view)}`;
  if (state.openViewKey === key) return;
  state.openViewId = open.viewId;
  state.openViewKey = key;
  showModal(open, {});
}

function showModal(open, errors) {
  const root = $("modal-root");
  const view = open.view ?? {};
  const previous = root.querySelector(".dialog") ? readInputs(root.querySelector(".dialog")) : undefined;
  const submit = view.submit
    ? h("button", { type: "button", class: "submit", "data-modal": "submit" }, plain(view.submit))
    : undefined;
  const cancel = h("button", { type: "button", "data-modal": "close" }, plain(view.close) || "Cancel");
  const dialog = h(
    "div",
    { class: "dialog", role: "dialog", "aria-label": plain(view.title), "data-view-id": open.viewId },
    h("h2", {}, plain(view.title)),
    problemsBox(open.problems),
    renderBlocks(view.blocks, { surface: "modal", errors }),
    h("div", { class: "dialog-buttons" }, cancel, submit),
  );
  if (previous) restoreInputs(dialog, previous);
  cancel.addEventListener("click", () => {
    void api("/api/close", { user: state.user, viewId: open.viewId }).catch((err) => toast(err.message));
    state.openViewId = undefined;
    state.openViewKey = undefined;
    root.replaceChildren();
  });
  submit?.addEventListener("click", async () => {
    const values = readInputs(dialog);
    const local = clientErrors(view, values);
    if (Object.keys(local).length > 0) {
      showModal(open, local);
      return;
    }
    submit.disabled = true;
    try {
      const answer = await api("/api/submit", { user: state.user, viewId: open.viewId, values });
      if (answer.errors) showModal(open, answer.errors);
      else if (answer.status === 200) {
        root.replaceChildren();
      }
    } catch (err) {
      toast(err.message);
    } finally {
      submit.disabled = false;
    }
  });
  root.replaceChildren(h("div", { class: "overlay modal" }, dialog));
}

function restoreInputs(dialog, values) {
  for (const w of dialog.querySelectorAll(".bk-input")) {
    const v = values[w.dataset.blockId]?.[w.dataset.actionId];
    if (v === undefined || v === null) continue;
    if (Array.isArray(v))
      for (const box of w.querySelectorAll("input[type=checkbox]")) box.checked = v.includes(box.value);
    else if (w.dataset.type === "radio_buttons")
      for (const r of w.querySelectorAll("input[type=radio]")) r.checked = r.value === v;
    else {
      const c = w.querySelector("input, textarea, select");
      if (c) c.value = v;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Channel
// ---------------------------------------------------------------------------------------------

function renderMessage(m) {
  const isEphemeral = m.kind === "ephemeral";
  const body = h(
    "div",
    { class: "msg-body" },
    h(
      "div",
      { class: "msg-meta" },
      h("b", {}, "unstuck"),
      "APP ",
      m.updates > 0 ? h("span", { class: "edited" }, "(edited)") : undefined,
    ),
    isEphemeral
      ? h(
          "div",
          { class: "only-you" },
          m.visibleTo ? "Only visible to you" : "Ephemeral (recipient unknown: sent from the terminal)",
        )
      : undefined,
    problemsBox(m.problems),
  );
  if (Array.isArray(m.blocks) && m.blocks.length > 0)
    body.append(...renderBlocks(m.blocks, { surface: "message", msg: m }));
  else if (m.text) body.append(mrkdwn(m.text));
  // Uploaded files (the post-mortem draft): a download link each, with its size.
  for (const f of m.files ?? []) {
    body.append(
      h(
        "div",
        { class: "file" },
        h("a", { href: `/api/file/${encodeURIComponent(f.id)}`, download: f.name }, `📎 ${f.name}`),
        ` (${f.size.toLocaleString("en-US")} bytes)`,
      ),
    );
  }
  return h(
    "div",
    { class: `msg ${isEphemeral ? "ephemeral" : ""}`.trim(), "data-ts": m.ts, "data-kind": m.kind },
    h("div", { class: "avatar" }, "u"),
    body,
  );
}

/** Something that happened in the simulated world (not in Slack), shown where it happened in time. */
function renderWorldEvent(e) {
  const what = {
    running: "…",
    done: "done",
    refused: "nothing done",
    failed: "failed",
  }[e.status];
  return h(
    "div",
    {
      class: `msg world-event ${e.status}`,
      "data-kind": "world",
      "data-world-action": e.id,
      "data-status": e.status,
    },
    h("div", { class: "avatar world" }, "⚙"),
    h(
      "div",
      { class: "msg-body" },
      h("div", { class: "msg-meta" }, h("b", {}, "world"), `${e.label} (by ${userName(e.user)}) — ${what}`),
      e.lines.map((line) => h("div", { class: "world-line" }, line)),
    ),
  );
}

/** The world bar: one button per event the sandbox can make happen outside Slack. */
function renderWorld() {
  const bar = $("world");
  const actions = state.data.world?.actions ?? [];
  if (bar.childElementCount === actions.length) return;
  bar.replaceChildren(
    ...actions.map((a) => {
      const button = h(
        "button",
        { type: "button", class: "world-action", "data-world-action": a.id },
        a.label,
      );
      button.addEventListener("click", async () => {
        button.disabled = true;
        try {
          const answer = await api("/api/world", { user: state.user, id: a.id });
          toast(answer.lines?.[0] ?? a.label);
        } catch (err) {
          toast(err.message);
        } finally {
          button.disabled = false;
        }
      });
      return button;
    }),
  );
}

function renderChannel() {
  const data = state.data;
  const channel = $("channel");
  const page = document.scrollingElement;
  const nearBottom = page.scrollHeight - page.scrollTop - window.innerHeight < 80;
  const visible = data.messages.filter(
    (m) => m.kind === "message" || m.visibleTo === undefined || m.visibleTo === state.user,
  );
  const replies = new Map();
  const top = [];
  for (const m of visible) {
    if (m.threadTs && visible.some((p) => p.ts === m.threadTs)) {
      if (!replies.has(m.threadTs)) replies.set(m.threadTs, []);
      replies.get(m.threadTs).push(m);
    } else top.push(m);
  }
  const events = (data.world?.events ?? []).map((e) => ({ ...e, kind: "world" }));
  const timeline = [...top, ...events].sort((a, b) => a.at - b.at);
  channel.replaceChildren(
    ...timeline.map((m) => {
      if (m.kind === "world") return renderWorldEvent(m);
      const el = renderMessage(m);
      const thread = replies.get(m.ts);
      if (thread) {
        el.querySelector(".msg-body").append(
          h(
            "div",
            { class: "thread", "data-thread-ts": m.ts },
            h(
              "div",
              { class: "thread-label" },
              `${thread.length} ${thread.length === 1 ? "reply" : "replies"}`,
            ),
            thread.map(renderMessage),
          ),
        );
      }
      return el;
    }),
  );
  if (nearBottom) window.scrollTo(0, page.scrollHeight);
}

async function refreshLint() {
  const res = await fetch("/api/lint");
  const lint = await res.json();
  const el = $("lint");
  el.textContent = lint.ok
    ? `Block Kit: ${lint.checked} checked, OK${lint.warnings ? ` (${lint.warnings} warnings)` : ""}`
    : `Block Kit: ${lint.errors} errors`;
  el.classList.toggle("bad", !lint.ok);
}

async function refresh() {
  const res = await fetch("/api/state");
  state.data = await res.json();
  document.body.dataset.version = state.data.version;
  $("channel-name").textContent = `#${state.data.channel.name}`;
  fillUsers();
  renderWorld();
  renderChannel();
  renderModal();
  await refreshLint();
}

function fillUsers() {
  const select = $("user");
  if (select.options.length > 0) return;
  for (const u of state.data.users) select.append(h("option", { value: u.id }, `${u.name} (${u.role})`));
  const wanted =
    new URL(window.location.href).searchParams.get("as") ?? localStorage.getItem("unstuck-console-user");
  state.user = state.data.users.some((u) => u.id === wanted) ? wanted : state.data.users[0]?.id;
  select.value = state.user;
  select.addEventListener("change", () => {
    state.user = select.value;
    localStorage.setItem("unstuck-console-user", state.user);
    state.openViewId = undefined;
    state.openViewKey = undefined;
    renderChannel();
    renderModal();
  });
}

function start() {
  $("composer").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const input = $("composer-input");
    const text = input.value.trim();
    if (!text) return;
    const name = state.data?.command ?? "/unstuck";
    if (!text.startsWith(name)) {
      toast(`Only ${name} commands reach the bot here`);
      return;
    }
    input.value = "";
    try {
      await api("/api/command", { user: state.user, text });
    } catch (err) {
      toast(err.message);
    }
  });
  let pending = false;
  let again = false;
  const update = () => {
    if (pending) {
      again = true;
      return;
    }
    pending = true;
    refresh()
      .catch((err) => toast(`console: ${err.message}`))
      .finally(() => {
        pending = false;
        if (again) {
          again = false;
          update();
        }
      });
  };
  const events = new EventSource("/api/stream");
  events.addEventListener("change", update);
  // SSE can drop (a proxy, a sleeping laptop): poll slowly as well.
  setInterval(update, 3000);
  update();
}

start();
