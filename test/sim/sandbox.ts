/**
 * The local sandbox: what `npm start` runs when no Slack credentials are set. The whole product —
 * the real runtime (Bolt app, Redis approvals, BullMQ workers) — against the simulated world of
 * the seed incident (Kubernetes API, AWS account, Load Balancer Controller) and a fake Slack
 * workspace, driven from the terminal: lines typed here become signed slash commands and button
 * clicks over HTTP, exactly as Slack would send them, and what the bot posts is printed as text.
 *
 *   /unstuck ns myapp          a slash command, as the current user
 *   as U0APPROVER1             act as another Slack user
 *   click 2                    press button [2] of a message shown above
 *   click Fix the path         press the latest button with that label
 *   wait is Deployed           wait (up to 2 min) until the bot says this (since the last command)
 *   argo sync myapp            Argo CD re-syncs myapp once it is gone (docs/incident.md, step 8): the
 *                              namespace and its Ingress come back, the controller builds a new ALB
 *   quit
 *
 * Standard input may be a script (one line per command); the sandbox stops at its end.
 */
import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { Redis } from "ioredis";
import { pino } from "pino";
import { createAwsClients, destroyAwsClients } from "../../src/aws/clients.js";
import { createAwsAdapter } from "../../src/aws/sdk-adapter.js";
import { generateKeyText } from "../../src/trust/keys.js";
import { loadConfig } from "../../src/config.js";
import { toUserError } from "../../src/errors.js";
import { createKubeAdapter } from "../../src/kube/client-node-adapter.js";
import { createEdgeProbe } from "../../src/net/probe.js";
import { createRuntime } from "../../src/runtime.js";
import {
  blockActionsBody,
  postSigned,
  slashCommandBody,
  startFakeSlack,
  viewSubmissionBody,
} from "./slack/index.js";
import { startConsole, userResponseId, type SlackConsole } from "./slack/console/server.js";
import { startWorld } from "./world.js";
import { argoSyncSeed, SEED_NAMESPACE } from "./argo-sync.js";
import { deleteKeysWithPrefix } from "./redis.js";
import { ensureSandboxRedis } from "./sandbox-redis.js";

/** A signing secret of this run only: nothing outside the sandbox can sign a request it accepts. */
const SECRET = randomBytes(32).toString("hex");
const TOKEN = "xoxb-sandbox-token";
const CHANNEL = "C0INCIDENT";
const SCENARIO = "test/fixtures/scenarios/seed-incident.yaml";

/** Who can act in the sandbox's workspace (UNSTUCK_APPROVERS names the two approvers). */
const SANDBOX_USERS = [
  { id: "U0ONCALL1", name: "oncall", role: "requester" },
  { id: "U0APPROVER1", name: "approver-1", role: "approver" },
  { id: "U0APPROVER2", name: "approver-2", role: "approver" },
  { id: "U0STRANGER1", name: "stranger", role: "not an approver" },
] as const;

/** A field of a decoded Slack payload as text ("" when absent or not a string/number). */
function str(v: unknown): string {
  return typeof v === "string" ? v : typeof v === "number" ? String(v) : "";
}

interface Button {
  readonly actionId: string;
  readonly value: string;
  readonly label: string;
  readonly channel: string;
  readonly ts: string;
}

/** Flatten Block Kit to terminal text; buttons get numbers from `addButton`. */
export function blocksToText(
  blocks: unknown,
  addButton: (b: Omit<Button, "channel" | "ts">) => number,
): string {
  const lines: string[] = [];
  const clean = (t: string): string =>
    t
      .replace(/<!date\^\d+\^[^|]*\|([^>]*)>/g, "$1")
      .replace(/<@([A-Z0-9]+)>/g, "@$1")
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">")
      .replace(/&amp;/g, "&")
      .replace(/```/g, "");
  for (const raw of Array.isArray(blocks) ? (blocks as Record<string, unknown>[]) : []) {
    const text = (raw.text as { text?: string } | undefined)?.text;
    switch (raw.type) {
      case "header":
        lines.push(`== ${clean(text ?? "")} ==`);
        break;
      case "section":
        if (text) lines.push(clean(text));
        for (const f of (raw.fields as { text?: string }[] | undefined) ?? [])
          lines.push(clean(f.text ?? ""));
        break;
      case "context":
        lines.push(
          ((raw.elements as { text?: string }[] | undefined) ?? [])
            .map((e) => clean(e.text ?? ""))
            .join("  "),
        );
        break;
      case "divider":
        lines.push("----");
        break;
      case "actions": {
        const buttons = ((raw.elements as Record<string, unknown>[] | undefined) ?? []).filter(
          (e) => e.type === "button",
        );
        lines.push(
          buttons
            .map((b) => {
              const label = (b.text as { text?: string } | undefined)?.text ?? str(b.action_id);
              const n = addButton({ actionId: str(b.action_id), value: str(b.value), label });
              return `[${String(n)}] ${label}`;
            })
            .join("   "),
        );
        break;
      }
      case "input": {
        // A form's checkboxes (the finalize form's statements): shown so the answer knows what it ticks.
        const element = raw.element as
          { type?: string; options?: { text?: { text?: string } }[] } | undefined;
        if (element?.type === "checkboxes")
          for (const o of element.options ?? []) lines.push(`[ ] ${clean(o.text?.text ?? "")}`);
        break;
      }
      default:
        break;
    }
  }
  return lines.join("\n");
}

/** The key variables of a sandbox process (role `all`): a bot and a workers' key pair of its own. */
function sandboxKeys(): Record<string, string> {
  const bot = generateKeyText();
  const worker = generateKeyText();
  return {
    UNSTUCK_BOT_SIGNING_KEY: bot.privateKey,
    UNSTUCK_BOT_PUBLIC_KEYS: bot.publicKey,
    UNSTUCK_WORKER_SIGNING_KEY: worker.privateKey,
    UNSTUCK_WORKER_PUBLIC_KEYS: worker.publicKey,
  };
}

export async function runSandbox(io: {
  out: (s: string) => void;
  /** How long a `wait <text>` line waits at most (default 2 min). */
  waitMs?: number;
  input: NodeJS.ReadableStream;
  interactive: boolean;
  /** `REDIS_URL` (default `redis://127.0.0.1:6379`); when nothing answers there, a private server. */
  redisUrl?: string;
  /** The server binary to start then (default `redis-server`). */
  redisServer?: string;
}): Promise<number> {
  const redis = await ensureSandboxRedis(io.redisUrl ?? "redis://127.0.0.1:6379", io.out, io.redisServer);
  if (redis === undefined) return 2;
  const redisUrl = redis.url;

  const world = await startWorld({
    scenario: SCENARIO,
    // Time compressed as for CloudFront (seconds, not minutes): the controller gives up on the
    // shared security group after 10 s rather than 2 min, so once Argo CD re-syncs the namespace its
    // new ALB comes within seconds.
    lbc: { backendSgTimeoutMs: 10_000, managedSgTimeoutMs: 10_000, requeueMs: 5_000 },
  });
  const fake = await startFakeSlack({ token: TOKEN });
  const dir = resolve(".sandbox");
  await mkdir(dir, { recursive: true });
  const kubeconfig = join(dir, "kubeconfig");
  await world.kube.writeKubeconfig(kubeconfig);
  const awsEnv = { ...world.aws.env(), UNSTUCK_CLUSTER_NAME: "prod-eks" };
  await writeFile(
    join(dir, "aws.env"),
    `${Object.entries(awsEnv)
      .map(([k, v]) => `export ${k}=${JSON.stringify(v)}`)
      .join("\n")}\n`,
  );
  const prefix = `unstuck-sandbox-${randomBytes(3).toString("hex")}`;
  // What the world needs is the sandbox's to set; every other UNSTUCK_* setting of the person
  // running it is honoured (a short UNSTUCK_REQUEST_TTL_SECONDS to try expiry, say).
  const worldSettings = {
    // Loopback only: the sandbox's bot is for this machine's browser and terminal, not the network.
    UNSTUCK_LISTEN_HOST: "127.0.0.1",
    UNSTUCK_REDIS_PREFIX: prefix,
    UNSTUCK_APPROVERS: "U0APPROVER1,U0APPROVER2",
    UNSTUCK_CHANNELS: CHANNEL,
    // After a repair the bot waits for the world's own DNS and HTTP front to answer.
    UNSTUCK_DNS_RESOLVERS: world.dns.address,
    UNSTUCK_HTTP_PROBE_VIA: world.httpFront.url,
    // Fresh key pairs per sandbox process (the bot's and the workers', one process holding both):
    // nothing it signs outlives it.
    ...sandboxKeys(),
  };
  const yours = Object.entries(process.env).filter(
    (e): e is [string, string] =>
      e[0].startsWith("UNSTUCK_") && e[1] !== undefined && e[0] !== "UNSTUCK_CONSOLE_PORT",
  );
  const honoured = yours.filter(([k]) => !(k in worldSettings) && k !== "UNSTUCK_CLUSTER_NAME");
  const overridden = yours.filter(([k]) => !honoured.some(([h]) => h === k)).map(([k]) => k);
  const config = loadConfig({
    ...awsEnv,
    SLACK_BOT_TOKEN: TOKEN,
    SLACK_SIGNING_SECRET: SECRET,
    SLACK_API_URL: fake.url,
    PORT: "0",
    REDIS_URL: redisUrl,
    UNSTUCK_WAIT_INTERVAL_SECONDS: "2",
    ...Object.fromEntries(honoured),
    ...worldSettings,
  });
  // The terminal CLI reads the same Redis and key prefix (`timeline`, `audit`, `approvals`), and the
  // same simulated cluster and AWS account for its reads.
  const cliEnv = join(dir, "cli.env");
  await writeFile(
    cliEnv,
    `${Object.entries({
      ...awsEnv,
      KUBECONFIG: kubeconfig,
      REDIS_URL: redisUrl,
      UNSTUCK_REDIS_PREFIX: prefix,
      UNSTUCK_DNS_RESOLVERS: world.dns.address,
      UNSTUCK_HTTP_PROBE_VIA: world.httpFront.url,
    })
      .map(([k, v]) => `export ${k}=${JSON.stringify(v)}`)
      .join("\n")}\n`,
  );
  const log = pino({ level: "silent" });
  const clients = createAwsClients({
    region: config.aws?.region ?? "ap-northeast-2",
    endpoint: world.aws.url,
    ...(config.aws?.credentials ? { credentials: config.aws.credentials } : {}),
  });
  // Built by hand: test/sim/ must not import test/helpers/ (the world helper), so no bootRuntime here.
  const runtime = await createRuntime({
    config,
    log,
    services: {
      kube: createKubeAdapter(world.kube.kubeconfig()),
      now: () => new Date(),
      log,
      blockedAfterSeconds: config.blockedAfterSeconds,
      aws: { port: createAwsAdapter(clients), cluster: "prod-eks" },
      // `trace --probe` asks the world's DNS server and HTTP front, as the waits after a repair do.
      probe: createEdgeProbe({
        resolvers: config.edgeProbe.resolvers,
        timeoutMs: 3_000,
        ...(config.edgeProbe.httpVia !== undefined ? { httpVia: config.edgeProbe.httpVia } : {}),
      }),
      healthPaths: config.edgeProbe.healthPaths,
    },
    // The simulated CloudFront deploys in seconds, not minutes: the waits after a repair and the
    // path re-check after the namespace is gone look often enough to say so within seconds.
    edgeWaits: { intervalMs: 1_000, maxIntervalMs: 2_000 },
    pathRecheck: { intervalMs: 3_000 },
  });
  const { port } = await runtime.start();
  const events = `http://127.0.0.1:${String(port)}/slack/events`;
  // The same workspace in a browser: the sandbox is test code, so it reads its one setting itself.
  const consolePort = Number(process.env["UNSTUCK_CONSOLE_PORT"] ?? "0");
  let slackConsole: SlackConsole | undefined;
  try {
    slackConsole = await startConsole({
      fake,
      eventsUrl: events,
      signingSecret: SECRET,
      channel: { id: CHANNEL, name: "incident" },
      users: SANDBOX_USERS,
      worldActions: [
        {
          id: "argo-sync",
          label: `Argo CD re-syncs ${SEED_NAMESPACE}`,
          run: async () => {
            const r = await argoSyncSeed(world);
            return { ok: r.synced, lines: r.lines };
          },
        },
      ],
      port: Number.isInteger(consolePort) && consolePort >= 0 && consolePort < 65_536 ? consolePort : 0,
    });
  } catch (err) {
    io.out(`(the browser console did not start: ${toUserError(err).message})`);
  }

  io.out(
    [
      "unstuck sandbox — no Slack credentials, so the bot runs against a simulated world:",
      "  the seed incident (namespace myapp stuck Terminating, two Load Balancer Controllers, an ENI holding",
      "  the shared backend security group), a fake Slack workspace, and real Redis/BullMQ.",
      `  kubectl:  kubectl --kubeconfig ${kubeconfig} get ns`,
      `  aws:      source ${join(dir, "aws.env")} && aws ec2 describe-network-interfaces`,
      `  Redis:    ${redisUrl}, key prefix ${prefix} (removed when the sandbox stops)`,
      `  CLI:      source ${cliEnv} && npm run unstuck -- timeline   (also audit, approvals, trace ns myapp)`,
      "Type /unstuck commands as a Slack user would; `as <USER>` switches user (U0ONCALL1 requests,",
      "U0APPROVER1 approves), `click <n | label>` presses a button, `reason <text>` answers an open form,",
      "`wait <text>` waits until the bot says it, `quit` (or Ctrl-C) stops. Try: /unstuck ns myapp",
      `Once ${SEED_NAMESPACE} is gone, \`argo sync ${SEED_NAMESPACE}\` has Argo CD re-create it (a new ALB; CloudFront keeps the old origin).`,
      ...(slackConsole
        ? [`Or in a browser: ${slackConsole.url}  (the channel, threads, buttons, modals; act as any user)`]
        : []),
      ...(honoured.length > 0 ? [`Your settings: ${honoured.map(([k, v]) => `${k}=${v}`).join(" ")}`] : []),
      ...(overridden.length > 0
        ? [`Not yours to set here (the sandbox's world sets them): ${overridden.join(", ")}`]
        : []),
    ].join("\n"),
  );

  let user = "U0ONCALL1";
  // Everything shown, and where the last command's output starts, for `wait <text>`.
  let transcript = "";
  let mark = 0;
  const out = io.out;
  io = { ...io, out: (text: string) => ((transcript += `${text}\n`), out(text)) };
  const buttons: Button[] = [];
  let seen = 0;
  let seenResponses = 0;
  /** Each edited message's state as last printed: an edit is printed only when its state changes. */
  const lastState = new Map<string, string>();
  /** Uploaded files are saved here, so the terminal can open them too. */
  const filesDir = join(dir, "files");
  const savedFiles = new Set<string>();
  const showFiles = async (): Promise<void> => {
    for (const f of fake.files()) {
      if (!f.completed || f.content === undefined || savedFiles.has(f.id)) continue;
      savedFiles.add(f.id);
      const name = f.filename.replace(/[^A-Za-z0-9._-]/g, "_");
      const path = join(filesDir, name);
      await mkdir(filesDir, { recursive: true });
      await writeFile(path, f.content);
      io.out(
        `── unstuck uploaded a file in #incident${f.threadTs !== undefined ? " (thread)" : ""}: ${f.filename} (${f.content.length.toLocaleString("en-US")} bytes), saved as ${path}`,
      );
    }
  };
  const show = (): void => {
    const calls = fake.calls();
    for (; seen < calls.length; seen++) {
      const c = calls[seen];
      if (
        !c ||
        !["chat.postMessage", "chat.update", "chat.postEphemeral", "views.open", "views.update"].includes(
          c.method,
        )
      )
        continue;
      const body = c.body;
      const ts = str(body.ts ?? c.response?.ts);
      const isView = c.method === "views.open" || c.method === "views.update";
      const viewBlocks = isView ? (body.view as { blocks?: unknown } | undefined)?.blocks : undefined;
      const asks = JSON.stringify(viewBlocks ?? []).includes('"type":"input"');
      const header =
        c.method === "chat.update"
          ? `── message updated (${ts})`
          : isView
            ? `── ${c.method === "views.open" ? "a form opened" : "the form now reads"}${asks ? " (answer with: reason <text>; answering ticks every [ ] statement below as yours)" : ""}`
            : `── unstuck in #incident${body.thread_ts ? " (thread)" : ""}`;
      const blocks = isView ? viewBlocks : body.blocks;
      const channel = str(body.channel) || CHANNEL;
      const text = blocksToText(blocks, (b) => buttons.push({ ...b, channel, ts }));
      // An update repeats the whole message: show what changed at its top (state, outcome), not all of it.
      const shown = c.method === "chat.update" ? (text.split(/\n\*(?:Risk|Change)\*/)[0] ?? text) : text;
      const printed = shown || str(body.text);
      // A wait edits its status message on every check ("… for 12s (check 4, next in 3s)"): print an
      // edit only when the message says something new — its words, counters and clock times aside.
      const state = printed.replace(/\d+/g, "#");
      const key = `${channel} ${ts}`;
      if (c.method === "chat.update" && lastState.get(key) === state) continue;
      lastState.set(key, state);
      io.out(`${header}\n${printed}`);
    }
    const responses = fake.responses();
    for (; seenResponses < responses.length; seenResponses++) {
      const r = responses[seenResponses]?.body;
      // A private answer withdrawn (shared in the channel instead): nothing to show.
      if (!r || r.delete_original === true) continue;
      io.out(
        `── only visible to you\n${blocksToText(r.blocks, (b) => buttons.push({ ...b, channel: CHANNEL, ts: "" })) || str(r.text)}`,
      );
    }
  };
  const timer = setInterval(() => {
    show();
    void showFiles().catch((err: unknown) =>
      io.out(`(could not save an uploaded file: ${toUserError(err).message})`),
    );
  }, 150);
  let pendingModal: { viewId: string } | undefined;

  const rl = createInterface({ input: io.input, terminal: false });
  // Ctrl-C stops as `quit` does (the bot stopped, its Redis keys removed); a second one exits at once.
  let stopping = false;
  const onSigint = (): void => {
    if (stopping) process.exit(130);
    stopping = true;
    out("\n(stopping: removing the sandbox's keys from Redis; Ctrl-C again to exit at once)");
    rl.close();
  };
  process.on("SIGINT", onSigint);
  const prompt = (): void => {
    if (io.interactive) process.stdout.write(`[${user} #incident] > `);
  };
  prompt();
  const settle = (): Promise<void> => new Promise((r) => setTimeout(r, io.interactive ? 300 : 1500));
  for await (const raw of rl) {
    const line = raw.trim();
    // A command's output starts here (a `wait` looks from the command before it on).
    if (line !== "" && !line.startsWith("wait ")) mark = transcript.length;
    // The echo is not the bot's: it stays out of the transcript `wait` reads.
    if (!io.interactive && line) out(`[${user} #incident] > ${line}`);
    try {
      if (line === "" || line.startsWith("#")) {
        // nothing
      } else if (line === "quit" || line === "exit") {
        break;
      } else if (line.startsWith("as ")) {
        // Only someone of the workspace, by id or name: an unknown user would act as nobody.
        const who = line.slice(3).trim();
        const found = SANDBOX_USERS.find((u) => u.id === who.toUpperCase() || u.name === who.toLowerCase());
        if (found) user = found.id;
        else
          io.out(
            `(no such user: ${who}; the workspace has ${SANDBOX_USERS.map((u) => `${u.id} (${u.name}, ${u.role})`).join(", ")})`,
          );
      } else if (line.startsWith("/unstuck")) {
        const res = await postSigned(
          events,
          SECRET,
          slashCommandBody({
            text: line.replace(/^\/unstuck\s*/, ""),
            userId: user,
            channelId: CHANNEL,
            responseUrl: fake.responseUrl(userResponseId(user, `sb-${String(Date.now())}`)),
          }),
        );
        if (res.status !== 200)
          io.out(`(Slack would show: the command failed with HTTP ${String(res.status)})`);
        await settle();
      } else if (line.startsWith("wait ")) {
        const text = line.slice(5).trim();
        const deadline = Date.now() + (io.waitMs ?? 120_000);
        const seen = (): boolean => transcript.includes(text, mark);
        while (!seen() && Date.now() < deadline && !stopping) {
          await new Promise((r) => setTimeout(r, 200));
          show();
        }
        if (!seen()) io.out(`(not seen within ${String(io.waitMs ?? 120_000)} ms: ${text})`);
      } else if (line.startsWith("click ")) {
        const which = line.slice(6).trim();
        const b = /^\d+$/.test(which)
          ? buttons[Number(which) - 1]
          : buttons.findLast((x) => x.label.toLowerCase() === which.toLowerCase());
        if (!b) io.out("no such button");
        else {
          const views = fake.views().length;
          await postSigned(
            events,
            SECRET,
            blockActionsBody({
              actionId: b.actionId,
              value: b.value,
              userId: user,
              channelId: b.channel,
              messageTs: b.ts,
              responseUrl: fake.responseUrl(userResponseId(user, `sb-click-${String(Date.now())}`)),
              // As Slack sends them: the message's blocks as they read now.
              blocks: (fake.message(b.channel, b.ts)?.blocks as unknown[] | undefined) ?? [],
            }),
          );
          await settle();
          const opened = fake.views()[views];
          if (opened) pendingModal = { viewId: opened.id };
        }
      } else if (/^argo\s+sync(\s|$)/.test(line)) {
        const app = line.split(/\s+/)[2] ?? SEED_NAMESPACE;
        if (app !== SEED_NAMESPACE)
          io.out(`Argo CD: no application ${app} (the sandbox has ${SEED_NAMESPACE})`);
        else for (const l of (await argoSyncSeed(world)).lines) io.out(l);
        await settle();
      } else if (line.startsWith("reason ") && pendingModal) {
        type FormView = {
          callback_id?: string;
          private_metadata?: string;
          blocks?: {
            block_id?: string;
            element?: { type?: string; action_id?: string; options?: { value?: string }[] };
          }[];
        };
        const { viewId } = pendingModal;
        const current = (): FormView | undefined => fake.views().find((v) => v.id === viewId)?.view;
        const reasonInput = (v: FormView | undefined) =>
          v?.blocks?.find((blk) => blk.element?.action_id?.includes("reason"));
        // A form may first say what it is checking ("Tracing…") and become the form a moment later.
        const deadline = Date.now() + 30_000;
        while (reasonInput(current()) === undefined && Date.now() < deadline && !stopping) {
          await new Promise((r) => setTimeout(r, 100));
          show();
        }
        const view = current();
        const input = reasonInput(view);
        if (input === undefined) {
          io.out("(the form asks for nothing: close it, there is no reason to give)");
          pendingModal = undefined;
        } else {
          // The statements shown with the form: typing the reason is the requester ticking them.
          const ticks = Object.fromEntries(
            (view?.blocks ?? [])
              .filter((blk) => blk.element?.type === "checkboxes")
              .map((blk) => [
                str(blk.block_id),
                {
                  [str(blk.element?.action_id)]: {
                    selected: (blk.element?.options ?? []).map((o) => str(o.value)),
                  },
                },
              ]),
          );
          const answer = await postSigned(
            events,
            SECRET,
            viewSubmissionBody({
              callbackId: str(view?.callback_id),
              privateMetadata: str(view?.private_metadata),
              userId: user,
              values: {
                [input?.block_id ?? "reason"]: { [input?.element?.action_id ?? "reason"]: line.slice(7) },
                ...ticks,
              },
            }),
          );
          // A form the bot refused stays open, as in Slack, with its errors under their fields.
          const refused = formErrors(answer.text);
          if (refused.length > 0) {
            for (const e of refused) io.out(`the form refused it: ${e} (type reason <text> again)`);
          } else {
            pendingModal = undefined;
          }
          await settle();
        }
      } else {
        io.out(
          `type /unstuck <command>, as <USER>, click <n | label>, wait <text>, argo sync ${SEED_NAMESPACE}, or quit`,
        );
      }
    } catch (err) {
      io.out(`error: ${toUserError(err).message}`);
    }
    show();
    prompt();
  }
  clearInterval(timer);
  show();
  await showFiles().catch(() => undefined);
  rl.close();
  process.off("SIGINT", onSigint);
  await slackConsole?.stop();
  await runtime.stop();
  const cleanup = new Redis(redisUrl);
  const removed = await deleteKeysWithPrefix(cleanup, prefix);
  await cleanup.quit();
  io.out(`Stopped: the bot and its workers are down; ${String(removed)} Redis keys under ${prefix} removed.`);
  await redis.stop();
  destroyAwsClients(clients);
  await fake.stop();
  await world.stop();
  return 0;
}

/** The errors a modal submission was answered with (`response_action: errors`), one per field. */
function formErrors(body: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  if (typeof parsed !== "object" || parsed === null) return [];
  const answer = parsed as { response_action?: unknown; errors?: unknown };
  if (answer.response_action !== "errors" || typeof answer.errors !== "object" || answer.errors === null)
    return [];
  return Object.values(answer.errors as Record<string, unknown>).map(String);
}
