/**
 * What `createSlackApp` returns, apart from `app.ts`, so the modules that register listeners on it
 * (`approvals.ts`, `repair.ts`) need not import the app that imports them.
 */
import type { App } from "@slack/bolt";
import type { ActionRouter, HasActionRouter } from "./actions.js";
import type { FormRouter, HasFormRouter } from "./forms.js";

export interface SlackApp extends HasActionRouter, HasFormRouter {
  readonly app: App;
  /** Register button handlers here (see `registerActions`). */
  readonly actions: ActionRouter;
  /** Register form submissions here: they then pass the same chain as buttons. */
  readonly forms: FormRouter;
  readonly mode: "http" | "socket";
  /**
   * Verify the bot token (`auth.test`, failing fast with a clear error) and start receiving. In HTTP mode the
   * result carries the bound port, which is the real one when the configured port is 0.
   */
  start(): Promise<{ port?: number }>;
  stop(): Promise<void>;
}
