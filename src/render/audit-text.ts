/** An audit entry as one line of the terminal's `audit` listing. */
import type { AuditEntry } from "../audit/entry.js";

/** One line for humans: `03:12:09Z <@U123> vote.approve Ingress myapp/x (PENDING → APPROVED): …`. */
export function formatAuditEntry(entry: AuditEntry): string {
  const who = entry.actor.kind === "user" ? `<@${entry.actor.userId}>` : entry.actor.component;
  const move = entry.before || entry.after ? ` (${entry.before ?? "—"} → ${entry.after ?? "—"})` : "";
  const result = entry.result ? `: ${entry.result}` : "";
  return `${entry.at} ${who} ${entry.event} ${entry.action} ${entry.target} [${entry.requestId}]${move}${result}`;
}
