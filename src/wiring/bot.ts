/**
 * The Slack app of a bot process, wired: the command registry (bounded), what follows a posted
 * answer, the diagnosis card's buttons, and the forms that turn into approval requests.
 */
import type { WebClient } from "@slack/web-api";
import { requestRemovalWithPlan, diagnoseOptions } from "../../commands/finalize.js";
import { defaultRegistry } from "../../commands/index.js";
import { planRepairOf, requestRepairWithPlan } from "../../commands/repoint.js";
import type { RepairCards } from "../jobs/repair-cards.js";
import { boundedRegistry, commandBoundMs } from "../app/bounded-registry.js";
import type { StartNamespaceWait } from "../app/namespace-wait.js";
import { afterPost } from "../app/posted.js";
import { filedHere, removalRequester, repairChecker, repairRequester } from "../app/requests.js";
import type { ApprovalWorkflow } from "../approvals/workflow.js";
import type { AuditLog } from "../audit/log.js";
import type { CommandDispatcher, CommandServices } from "../command-contract.js";
import type { Config } from "../config.js";
import { diagnoseNamespace } from "../diagnosis/diagnose.js";
import { clusterOfResult } from "../fleet/dispatcher.js";
import type { NamespaceMessages } from "../jobs/namespace-messages.js";
import type { Logger } from "../log.js";
import { createSlackApp, SLACK_EVENTS_PATH, type SlackApp } from "../slack/app.js";
import { postApprovalRequest, registerApprovalActions } from "../slack/approvals.js";
import type { ChannelGate } from "../slack/channel-gate.js";
import { registerDiagnosisActions } from "../slack/diagnosis-actions.js";
import { redisEventClaims } from "../slack/event-dedupe.js";
import { renderSlackMessage } from "../slack/blocks/index.js";
import { registerRepairActions } from "../slack/repair.js";
import { botFleet, type BotFleet, type BotFleetDeps } from "./fleet-bot.js";
import { slackDiagnosisCard, slackWatchJoined } from "./slack-presenters.js";
import { warmAckPath, warmUp } from "./warm-up.js";

export interface BotDeps {
  readonly config: Config;
  readonly redis: Parameters<typeof redisEventClaims>[0];
  readonly prefix: string;
  readonly cluster: string;
  readonly channelGate: ChannelGate;
  /** The services a command runs with, approvals included. */
  readonly services: CommandServices;
  readonly kube: CommandServices["kube"];
  readonly workflow: ApprovalWorkflow;
  readonly audit: AuditLog;
  readonly namespaceMessages: NamespaceMessages;
  readonly repairCards: RepairCards;
  readonly startWait: StartNamespaceWait;
  readonly client: WebClient;
  readonly now: () => Date;
  readonly log: Logger;
  /**
   * In a fleet: the clusters' queues and presence. Commands, forms and buttons that read a cluster
   * are then sent to that cluster's workers (`src/wiring/fleet.ts`); this process reads none itself.
   */
  readonly fleet?: Pick<BotFleetDeps, "fleet" | "queues" | "presence" | "waitSeal">;
}

/** The Slack app with its commands, buttons and forms (not for the worker role). */
export function createBotApp(d: BotDeps): SlackApp {
  const local = boundedRegistry(defaultRegistry(d.config.command), commandBoundMs(d.config));
  const fleet = fleetSide(d, local);
  const registry: CommandDispatcher = fleet?.registry ?? local;
  const slack = receiver(d, registry, fleet);
  registerCardActions(slack, d, fleet);
  // The command path used once before listening, so the first burst of commands is acknowledged
  // as fast as later ones (src/wiring/warm-up.ts).
  return { ...slack, start: () => startBotApp(d, slack, registry) };
}

/** The bot's side of a fleet over its own registry (files drafts with the workflow); none outside one. */
function fleetSide(d: BotDeps, local: BotFleetDeps["local"]): BotFleet | undefined {
  const { workflow } = d;
  return d.fleet !== undefined
    ? botFleet({
        ...d.fleet,
        config: d.config,
        namespaceMessages: d.namespaceMessages,
        local,
        now: d.now,
        file: (draft, requester, channelId, cluster) =>
          workflow.fileDraft(draft, requester, channelId, cluster),
      })
    : undefined;
}

/** The Slack receiver: commands through `registry`, what follows a posted answer, new requests posted. */
function receiver(d: BotDeps, registry: CommandDispatcher, fleet: BotFleet | undefined): SlackApp {
  const { config, workflow, now } = d;
  const renderCard = slackDiagnosisCard(config.command);
  const showJoined = slackWatchJoined(d.client);
  return createSlackApp({
    config,
    channelGate: d.channelGate,
    // One answer per event, whichever replica Slack's re-delivery reaches.
    eventClaims: redisEventClaims(d.redis, d.prefix),
    // The diagnosis deadline bounds reads; this bounds everything else a command waits on (Redis,
    // a write), so the requester always gets an answer.
    registry,
    services: d.services,
    log: d.log,
    now,
    // In a fleet the answer's cluster (the one whose workers gave it) keys its repaint and its wait.
    afterPost: async (result, posted) => {
      const cluster = fleet !== undefined ? clusterOfResult(result) : d.cluster;
      if (cluster === undefined) return;
      await afterPost({
        messages: d.namespaceMessages,
        cluster,
        startWait: fleet !== undefined ? fleet.startWaitOn(cluster) : d.startWait,
        renderCard,
        showJoined,
      })(result, posted);
    },
    // New requests, from the slash command as from every form, go through one posting path.
    postApprovalRequest: (client, request, scopeLog) =>
      postApprovalRequest(client, { workflow, now }, request, scopeLog),
  });
}

/**
 * The buttons and forms of the cards: diagnosis, approval and repair. In a fleet each runs on the
 * cluster it names (through the fleet's calls); otherwise here, with this process's services.
 */
function registerCardActions(slack: SlackApp, d: BotDeps, fleet: BotFleet | undefined): void {
  const { config, services, workflow, audit, now, log } = d;
  // The diagnosis card's *Details* and *Check again*: read again, answered in the card's thread.
  // In a fleet each button runs on the cluster it names (the card's), answering with its cluster again.
  registerDiagnosisActions(slack, {
    command: config.command,
    diagnose:
      fleet?.diagnose ??
      ((namespace) => diagnoseNamespace(services.kube, namespace, diagnoseOptions(services))),
    ...(fleet !== undefined ? { clusterOf: fleet.clusterOf } : {}),
  });
  registerApprovalActions(slack, {
    workflow,
    now,
    log,
    createRemovalRequest:
      fleet?.createRemovalRequest ??
      (async (input) =>
        filedHere(
          await removalRequester({
            kube: d.kube,
            requestRemoval: (i) => requestRemovalWithPlan(services, { workflow, audit }, i),
          })(input),
        )),
  });
  registerRepairActions(slack, {
    workflow,
    now,
    log,
    requestRepair:
      fleet?.requestRepair ??
      (async (input) =>
        filedHere(
          await repairRequester({
            requestRepair: (i) => requestRepairWithPlan(services, { workflow, audit }, i),
          })(input),
        )),
    checkRepair:
      fleet?.checkRepair ?? repairChecker({ planRepair: (subject) => planRepairOf(services, subject) }),
    cards: d.repairCards,
  });
}

/**
 * Starts the Slack app: a fleet's bot first listens for the clusters' answers; otherwise the command
 * path is warmed up before listening, and (over HTTP) the acknowledgement path after.
 */
async function startBotApp(
  d: BotDeps,
  slack: SlackApp,
  registry: CommandDispatcher,
): ReturnType<SlackApp["start"]> {
  const { config, log } = d;
  // A fleet's bot runs no command itself: it listens for the clusters' answers instead.
  if (d.fleet !== undefined) {
    await d.fleet.queues.listen(d.fleet.fleet.clusters.map((c) => c.name));
    return slack.start();
  }
  await warmUp({
    registry,
    services: d.services,
    command: config.command,
    render: (result) => renderSlackMessage(result, { command: config.command }),
    log,
  });
  const started = await slack.start();
  if (slack.mode === "http" && started.port !== undefined && config.slack !== undefined) {
    await warmAckPath({
      port: started.port,
      path: SLACK_EVENTS_PATH,
      signingSecret: config.slack.signingSecret,
      log,
    });
  }
  return started;
}
