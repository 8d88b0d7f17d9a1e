/**
 * Entry point (`npm start`, the image's CMD). SIGTERM and SIGINT are heard before anything else is
 * loaded: an ES module's static imports are all read and compiled before its first line runs, which
 * for the bot's graph took over half a second, and a stop sent then killed node (or, as PID 1 without
 * an init, was ignored and lost). So this module imports only the listener (`early-signals.ts`)
 * statically, and the bot itself (`start-bot.ts`) once it listens; a stop that comes while the bot
 * is still being loaded ends the process at once, since nothing has started.
 */
import { stopRequest } from "./early-signals.js";

let loaded = false;
// A stop before the bot has loaded: nothing has started, so nothing to hand over.
void stopRequest.requested.then((signal) => {
  if (loaded) return;
  process.stderr.write(`unstuck: ${signal} while loading; nothing was started.\n`);
  process.exit(0);
});

async function main(): Promise<number> {
  const { startBot, oneLine } = await import("./start-bot.js");
  loaded = true;
  return startBot(stopRequest).catch((err: unknown) => {
    process.stderr.write(`unstuck: cannot start: ${oneLine(err)}\n`);
    return 1;
  });
}

const code = await main().catch((err: unknown) => {
  process.stderr.write(`unstuck: cannot start: ${err instanceof Error ? err.message : String(err)}\n`);
  return 1;
});
// Exit explicitly: a socket a hung dependency still holds must not keep the process alive.
process.exit(code);
