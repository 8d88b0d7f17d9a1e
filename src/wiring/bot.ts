/**
 * The Slack app of a bot process, wired: the command registry (bounded), what follows a posted
 * answer, the diagnosis card's buttons, and the forms that turn into approval requests.
 */
import type { WebClient } from "@slack/web-api";
import { requestRemovalWithPlan, diagnoseOptions } from "../../commands/finalize.js";
import { defaultRegistry } from "../../commands/index.js";
import { requestRepairWithPlan } from "../../commands/repoint.js";
import { boundedRegistry, commandBoundMs } from "../app/bounded-registry.js";
import type { StartNamespaceWait } from "../app/namespace-wait.js";
import { afterPost } from "../app/posted.js";
import { removalRequester, repairRequester } from "../app/requests.js";
import type { ApprovalWorkflow } from "../approvals/workflow.js";
import type { AuditLog } from "../audit/log.js";
import type { CommandServices } from "../command-contract.js";
import type { Config } from "../config.js";
import { diagnoseNamespace } from "../diagnosis/diagnose.js";
import type { NamespaceMessages } from "../jobs/namespace-messages.js";
import type { Logger } from "../log.js";
import { createSlackApp, type SlackApp } from "../slack/app.js";
import { postApprovalRequest, registerApprovalActions } from "../slack/approvals.js";
import type { ChannelGate } from "../slack/channel-gate.js";
import { registerDiagnosisActions } from "../slack/diagnosis-actions.js";
import { redisEventClaims } from "../slack/event-dedupe.js";
import { renderSlackMessage } from "../slack/blocks/index.js";
import { registerRepairActions } from "../slack/repair.js";
import { slackDiagnosisCard, slackWatchJoined } from "./slack-presenters.js";
import { warmUp } from "./warm-up.js";

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
  readonly startWait: StartNamespaceWait;
  readonly client: WebClient;
  readonly now: () => Date;
  readonly log: Logger;
}

/** The Slack app with its commands, buttons and forms (not for the worker role). */
export function createBotApp(d: BotDeps): SlackApp {
  const { config, services, workflow, audit, now, log } = d;
  const registry = boundedRegistry(defaultRegistry(config.command), commandBoundMs(config));
  const slack = createSlackApp({
    config,
    channelGate: d.channelGate,
    // One answer per event, whichever replica Slack's re-delivery reaches.
    eventClaims: redisEventClaims(d.redis, d.prefix),
    // The diagnosis deadline bounds reads; this bounds everything else a command waits on (Redis,
    // a write), so the requester always gets an answer.
    registry,
    services,
    log,
    now,
    afterPost: afterPost({
      messages: d.namespaceMessages,
      cluster: d.cluster,
      startWait: d.startWait,
      renderCard: slackDiagnosisCard(config.command),
      showJoined: slackWatchJoined(d.client),
    }),
    // New requests, from the slash command as from every form, go through one posting path.
    postApprovalRequest: (client, request, scopeLog) =>
      postApprovalRequest(client, { workflow, now }, request, scopeLog),
  });
  // The diagnosis card's *Details* and *Check again*: read again, answered in the card's thread.
  registerDiagnosisActions(slack, {
    command: config.command,
    diagnose: (namespace) => diagnoseNamespace(services.kube, namespace, diagnoseOptions(services)),
  });
  registerApprovalActions(slack, {
    workflow,
    now,
    log,
    createRemovalRequest: removalRequester({
      kube: d.kube,
      requestRemoval: (input) => requestRemovalWithPlan(services, { workflow, audit }, input),
    }),
  });
  registerRepairActions(slack, {
    workflow,
    now,
    log,
    requestRepair: repairRequester({
      requestRepair: (input) => requestRepairWithPlan(services, { workflow, audit }, input),
    }),
  });
  // The command path used once before listening, so the first burst of commands is acknowledged
  // as fast as later ones (src/wiring/warm-up.ts).
  return {
    ...slack,
    start: async () => {
      await warmUp({
        registry,
        services,
        command: config.command,
        render: (result) => renderSlackMessage(result, { command: config.command }),
        log,
      });
      return slack.start();
    },
  };
}
