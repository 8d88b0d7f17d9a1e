/**
 * The one loader of the bot's Lua scripts. Every script is a file in `./lua/` named
 * `<name>.<number of keys>.lua`, so a reader sees from the name alone how many of its arguments
 * are keys (on a Redis Cluster they must share a slot: the keys are built in `keys.ts`, under one
 * hash-tagged prefix). A script is read once, when its module loads, and run by its SHA (taken on
 * its first run: a process that never runs one, a terminal's `ns`, never loads Node's crypto); only
 * a server whose script cache is empty (a restart, a fail-over, a fresh replica) gets the source, once.
 *
 * A file without a key count (`approval-prelude-*.lua`) is no script on its own: it is text a
 * composed script includes (see `loadScript`'s `compose`).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

/** What a script needs of a connection: a single server, a Sentinel-followed one or a Redis Cluster. */
export interface ScriptRedis {
  evalsha(sha: string, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
  eval(script: string, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
}

export interface RedisScript {
  /** The file it was read from, e.g. `post-claim.1.lua`. */
  readonly file: string;
  readonly numberOfKeys: number;
  run(redis: ScriptRedis, keys: readonly string[], args?: readonly (string | number)[]): Promise<unknown>;
}

const NAME = /^([a-z][a-z0-9-]*)\.(\d+)\.lua$/;

/** The text of a file in `./lua/` (for a composed script's preludes). */
export function readLua(file: string): string {
  return readFileSync(new URL(`./lua/${file}`, import.meta.url), "utf8");
}

/**
 * Load `./lua/<file>`. Its key count is read from its name; `compose`, when given, turns the file's
 * text into the script actually sent (the approval store wraps its transitions between shared
 * preludes and a common return).
 */
export function loadScript(file: string, compose?: (body: string) => string): RedisScript {
  const named = NAME.exec(file);
  if (named === null) throw new Error(`a script file is named <name>.<number of keys>.lua, not "${file}"`);
  const numberOfKeys = Number(named[2]);
  const body = readLua(file);
  const source = compose === undefined ? body : compose(body);
  let sha: string | undefined;
  return {
    file,
    numberOfKeys,
    async run(redis, keys, args = []) {
      if (keys.length !== numberOfKeys)
        throw new Error(`${file} takes ${numberOfKeys} keys, was given ${keys.length}`);
      sha ??= createHash("sha1").update(source).digest("hex");
      try {
        return await redis.evalsha(sha, numberOfKeys, ...keys, ...args);
      } catch (err) {
        if (!(err instanceof Error && err.message.startsWith("NOSCRIPT"))) throw err;
        return await redis.eval(source, numberOfKeys, ...keys, ...args);
      }
    },
  };
}
