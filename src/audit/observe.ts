/**
 * The bot's own observations, recorded in the audit log next to what people did, so the incident
 * timeline can say when the bot diagnosed, traced, checked orphans and waited, and what it saw. An
 * observation is an audit entry of its own kind: event `observed.<what>`, action `observe`, no request.
 *
 * Writes are one XADD and never throw: a command or a wait goes on when the audit log cannot be written
 * (the failure is logged by the audit log).
 */
import type { AuditLog } from "./log.js";
import { observationEntry, type ObservationKind, type Observe } from "./observation.js";

/** An {@link Observe} writing to `audit`; without an audit log (the read-only CLI) it records nothing. */
export function auditObserver(audit: AuditLog | undefined, now: () => Date): Observe {
  if (audit === undefined) return () => Promise.resolve();
  return (o) => audit.record(observationEntry(o, now()));
}

/**
 * A command's observer: records where the command was asked (channel, and thread when typed in one).
 * Commands run without an audit log (the read-only CLI) record nothing.
 */
export function commandObserver(
  services: { readonly approvals?: { readonly audit: AuditLog }; readonly now: () => Date },
  actor: { readonly channelId?: string; readonly threadTs?: string },
  component: string,
): (kind: ObservationKind, target: string, result: string) => Promise<void> {
  const observe = auditObserver(services.approvals?.audit, services.now);
  return (kind, target, result) =>
    observe({
      kind,
      component,
      target,
      result,
      ...(actor.channelId !== undefined ? { channel: actor.channelId } : {}),
      ...(actor.threadTs !== undefined ? { threadTs: actor.threadTs } : {}),
    });
}
