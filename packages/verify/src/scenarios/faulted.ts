import type { Fault } from '../proxy/faults';
import type { IntentRecord, ScenarioContext } from './scenario';

/**
 * The shape most scenarios share: one intent pressed once with some hops faulted,
 * then, once the chain settled, pressed again with the same key (the replay check).
 * A caller configured to send no key presses once and never again: without a key a
 * second press is another intent, so all that can be asked is "never twice".
 */
export async function faultedPress(
  context: ScenarioContext,
  faults: Record<string, Fault[]>,
  { intentId, key } = context.intent(),
): Promise<IntentRecord[]> {
  for (const [hop, attemptOne] of Object.entries(faults)) context.plan(hop, new Map([[1, attemptOne]]));
  const press = await context.press('press', intentId, key);
  await context.settle();
  if (key === undefined) return [{ intentId, key, effects: 'at-most-once', presses: [press] }];
  const laterPress = await context.press('later press', intentId, key);
  return [{ intentId, key, effects: 'once', presses: [press], laterPress }];
}

/** How long the write-up delays a hop's first answer so that its caller gives up first. */
export function holdMs(context: ScenarioContext, hop: string): number {
  const configured = context.config.hops.find((h) => h.name === hop)?.holdMs;
  // Without a figure for the hop's own caller, outlast the outermost timeout: inner
  // timeouts are shorter than outer ones in any chain that works at all.
  return configured ?? context.config.entry.timeoutMs + 250;
}
