/**
 * The bot's warm-up, run once at start before it listens (so before it reports ready): the first
 * command after start-up otherwise pays for everything used for the first time — the HTTP client's
 * parser compiled, the Kubernetes adapter built, discovery read and its watches opened, the command,
 * diagnosis and card code compiled — about half a second of CPU on the one event loop that also
 * acknowledges every other command of the first burst. Read-only: discovery and one namespace read.
 * Bounded, and never fatal: a warm-up that fails or takes too long leaves that work to the first
 * command, as before.
 */
import type { CommandDispatcher, CommandServices } from "../command-contract.js";
import type { Logger } from "../log.js";
import { orElse } from "../util/deadline.js";

export interface WarmUpDeps {
  readonly registry: CommandDispatcher;
  readonly services: CommandServices;
  /** The slash command's name (`unstuck`), as the registry's prefix. */
  readonly command: string;
  /** Renders a diagnosis as the slash command's answer does, to compile that path too. */
  readonly render: (result: Awaited<ReturnType<CommandDispatcher["dispatch"]>>) => unknown;
  readonly log: Logger;
  /** Longest the start waits for it (default 5 s); the rest goes on in the background. */
  readonly timeoutMs?: number;
}

/** A namespace every cluster has: reading it is one GET, whatever state it is in. */
export const WARM_UP_NAMESPACE = "default";

/** Warm the command path once; resolves when done, failed or timed out (never rejects). */
export async function warmUp(d: WarmUpDeps): Promise<void> {
  const started = Date.now();
  const work = (async () => {
    // Discovery first: the long-running adapter caches it (and watches CRDs for changes), so the
    // first diagnosis starts with it in hand.
    await d.services.kube.discover();
    // Without the approval engine, so nothing is recorded: the warm-up is no one's question and
    // must not appear in an incident's timeline.
    const readOnly: CommandServices = { ...d.services };
    delete (readOnly as { approvals?: unknown }).approvals;
    const result = await d.registry.dispatch(
      `ns ${WARM_UP_NAMESPACE}`,
      { actor: { userId: "unstuck-warm-up", teamId: "", surface: "cli" }, services: readOnly },
      d.command,
    );
    d.render(result);
  })();
  try {
    const outcome = await orElse(
      work.then(() => "done" as const),
      d.timeoutMs ?? 5_000,
      () => "timeout" as const,
    );
    d.log.debug({ outcome, ms: Date.now() - started }, "warm-up");
  } catch (err) {
    d.log.debug({ err: err instanceof Error ? err.message : String(err) }, "warm-up failed");
  } finally {
    work.catch(() => undefined);
  }
}
