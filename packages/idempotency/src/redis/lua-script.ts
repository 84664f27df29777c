import { createHash } from 'node:crypto';
import type { ChainableCommander, Cluster, Redis } from 'ioredis';

/**
 * A Lua script sent by its SHA-1 (`EVALSHA`), and in full (`EVAL`) when the
 * server does not have it: the first call after a restart, a failover or a
 * `SCRIPT FLUSH`. Redis keeps a loaded script for every client, so after
 * that one `EVAL` all of them send only the SHA again.
 *
 * Plain `evalsha` rather than ioredis's `defineCommand`, whose commands cost
 * each call an instance of a subclass, a closure and a spread copy of the
 * arguments: two scripts run on every protected request.
 */
export class LuaScript {
  /** What `EVALSHA` names the script by. */
  readonly sha: string;

  constructor(
    readonly lua: string,
    /** How many of a call's arguments are keys (they come first). */
    readonly numberOfKeys: number,
  ) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  /** Run the script with `args`, its keys first: one round trip, two when Redis had to be sent the script. */
  run(client: Redis | Cluster, args: ScriptArgument[]): Promise<unknown> {
    return client.evalsha(this.sha, this.numberOfKeys, ...args).catch((error: unknown) => {
      if (!isNoScript(error)) throw error;
      return client.eval(this.lua, this.numberOfKeys, ...args);
    });
  }

  /** Queue the script on `pipeline`, by its SHA or, with `full`, whole. */
  queue(pipeline: ChainableCommander, args: ScriptArgument[], full: boolean): ChainableCommander {
    return full ? pipeline.eval(this.lua, this.numberOfKeys, ...args) : pipeline.evalsha(this.sha, this.numberOfKeys, ...args);
  }
}

/** A key or argument of a script: text, or raw bytes (sent as they are, never as UTF-8). */
export type ScriptArgument = string | Buffer;

/** Whether Redis refused an `EVALSHA` because it does not have the script (nothing ran). */
export function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.includes('NOSCRIPT');
}
