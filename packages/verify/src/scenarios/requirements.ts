import type { ScenarioName } from '../config/schema';
import { variations } from './variations';

/** The part of a config that decides which scenarios can run at all. */
export interface ChainShape {
  entry: { key: { send: boolean }; callers?: unknown; url: string; body?: unknown };
  keyReuse: { ignoredFields: readonly string[]; ignoredQuery: readonly string[] };
  hops: readonly { name: string; service?: unknown }[];
  queue?: { service?: unknown };
}

/** Families that fault the queue hop's consumer: meaningless without one. */
const NEEDS_QUEUE: ReadonlySet<ScenarioName> = new Set(['lost-ack', 'duplicate-delivery', 'kill-before-ack']);

/** Families that are about what one key does: meaningless for a caller that sends none. */
const NEEDS_KEY: ReadonlySet<ScenarioName> = new Set(['later-press', 'late-press', 'double-click', 'key-reuse', 'two-callers']);

/**
 * What a family needs from the config and this config lacks, naming the field to set;
 * `undefined` when the family can run. One place for it, so that a family the config
 * names and one left to the default catalog are never told apart by different rules.
 */
export function missingFor(family: ScenarioName, config: ChainShape): string | undefined {
  if (NEEDS_KEY.has(family) && !config.entry.key.send) {
    return 'entry.key.send is false: the caller sends no key, and the scenario is about what a key does';
  }
  if (family === 'two-callers' && config.entry.callers === undefined) {
    return 'entry.callers is not set: it needs two callers (each with its own headers or body) to send one key';
  }
  if (family === 'key-reuse' && variations({ ...config.entry, ...config.keyReuse }, 'other').length === 0) {
    return 'the entry has no body field or query parameter left to change (entry.body as an object, or text in JSON or form encoding; keyReuse.ignoredFields, keyReuse.ignoredQuery)';
  }
  if (NEEDS_QUEUE.has(family) && config.queue === undefined) {
    return 'there is no queue hop (set queue: the broker, the queue the consumer reads, and where the consumer connects instead)';
  }
  if (family === 'kill-before-ack' && config.queue?.service === undefined) {
    return 'the queue hop has no service for the verifier to start, kill and start again (set queue.service)';
  }
  const deepest = config.hops.length - 1;
  if (family === 'kill' && config.hops[deepest]?.service === undefined) {
    return `the deepest hop "${config.hops[deepest]?.name}" has no service for the verifier to start, kill and start again (set hops.${deepest}.service)`;
  }
  return undefined;
}
