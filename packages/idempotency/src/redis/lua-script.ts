import { createHash } from 'node:crypto';
import { Command, type ChainableCommander, type Cluster, type Redis } from 'ioredis';

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
    return evalsha(client, this.sha, this.numberOfKeys, args).catch((error: unknown) => {
      if (!isNoScript(error)) throw error;
      return client.eval(this.lua, this.numberOfKeys, ...args);
    });
  }

  /** Queue the script on `pipeline`, by its SHA or, with `full`, whole. */
  queue(pipeline: ChainableCommander, args: ScriptArgument[], full: boolean): ChainableCommander {
    return full ? pipeline.eval(this.lua, this.numberOfKeys, ...args) : pipeline.evalsha(this.sha, this.numberOfKeys, ...args);
  }
}

/**
 * `EVALSHA` as `client.evalsha` sends it, written as one Buffer built in one
 * pass (see `ScriptCommand`), for a client that sends each command as it
 * comes. A client that prefixes keys, pipelines automatically or keeps a
 * friendly error stack takes ioredis's own path, which does that.
 */
function evalsha(client: Redis | Cluster, sha: string, numberOfKeys: number, args: ScriptArgument[]): Promise<unknown> {
  const options = client.options;
  if (options.keyPrefix || options.enableAutoPipelining || options.showFriendlyErrorStack) {
    return client.evalsha(sha, numberOfKeys, ...args);
  }
  const command = new ScriptCommand('evalsha', [sha, numberOfKeys, ...args], UTF8_REPLY);
  void client.sendCommand(command);
  return command.promise as Promise<unknown>;
}

/** A reply decoded as `client.evalsha` decodes it. */
const UTF8_REPLY = { replyEncoding: 'utf8' } as const;

/**
 * A command whose arguments include raw bytes, written as ioredis writes
 * them, byte for byte, at less cost. A Buffer argument sends ioredis's
 * `Command.toWritable` down a path that measures and copies each string and
 * each `$<length>` line as a part of its own (some twenty for a claim);
 * here the text between two Buffers is one string, measured and written
 * once. A command of strings only is one string, as ioredis sends it.
 */
export class ScriptCommand extends Command {
  override toWritable(): string | Buffer {
    // After construction every argument is a string or a Buffer (ioredis turned numbers into strings).
    const args = this.args as (string | Buffer)[];
    let text = `*${args.length + 1}\r\n$${this.name.length}\r\n${this.name}\r\n`;
    let parts: (string | Buffer)[] | undefined;
    let length = 0;
    for (const arg of args) {
      if (typeof arg === 'string') {
        text += `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`;
        continue;
      }
      text += `$${arg.length}\r\n`;
      (parts ??= []).push(text, arg);
      length += Buffer.byteLength(text) + arg.length;
      text = '\r\n';
    }
    if (parts === undefined) return text;
    parts.push(text);
    length += Buffer.byteLength(text);
    const wire = Buffer.allocUnsafe(length);
    let offset = 0;
    for (const part of parts) offset += typeof part === 'string' ? wire.write(part, offset) : part.copy(wire, offset);
    return wire;
  }
}

/** A key or argument of a script: text, or raw bytes (sent as they are, never as UTF-8). */
export type ScriptArgument = string | Buffer;

/** Whether Redis refused an `EVALSHA` because it does not have the script (nothing ran). */
export function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.includes('NOSCRIPT');
}
