import type { Press } from '../run/caller';
import type { IntentRecord, ScenarioContext } from './scenario';
import { variations } from './variations';

/** N presses at once with one key, as a double-click or an impatient retry does. */
export async function doubleClick(context: ScenarioContext): Promise<IntentRecord[]> {
  const { intentId, key } = context.intent();
  const clicks = Array.from({ length: context.config.doubleClick.presses }, (_, i) => context.press(`click ${i + 1}`, intentId, key));
  const presses = await Promise.all(clicks);
  await context.settle();
  const laterPress = await context.press('later press', intentId, key);
  return [{ intentId, key, effects: 'once', presses, laterPress }];
}

/**
 * A settled key sent again with its body changed, one field at a time (and the query,
 * one parameter at a time): each press must be refused and change nothing. A field
 * holding the intent's id is changed to another intent's, whose effects must stay none.
 */
export async function keyReuse(context: ScenarioContext): Promise<IntentRecord[]> {
  const first = context.intent();
  const press = await context.press('press', first.intentId, first.key);
  await context.settle();
  const other = context.intent().intentId;
  const refusedPresses: Press[] = [];
  for (const variation of variations({ ...context.config.entry, ...context.config.keyReuse }, other)) {
    refusedPresses.push(
      await context.press(`same key, ${variation.field} changed`, first.intentId, first.key, { body: variation.body, url: variation.url }),
    );
    await context.settle();
  }
  return [
    { ...first, effects: 'once', presses: [press], refusedPresses },
    { intentId: other, key: first.key, effects: 'none', presses: [] },
  ];
}

/**
 * The caller's retry at the end of its window: once the chain settled, wait
 * `retention.minimumMs`, then the same key again. A store that expires keys sooner
 * than the chain promises charges again.
 */
export async function latePress(context: ScenarioContext): Promise<IntentRecord[]> {
  const { intentId, key } = context.intent();
  const press = await context.press('press', intentId, key);
  await context.settle();
  await context.wait(context.config.retention.minimumMs);
  const laterPress = await context.press('late press', intentId, key);
  return [{ intentId, key, effects: 'once', presses: [press], laterPress }];
}

/** A press without a key, with the deepest reply lost so the chain's own retries run. */
export async function noKey(context: ScenarioContext, deepest: string): Promise<IntentRecord[]> {
  context.plan(deepest, new Map([[1, [{ kind: 'lose-reply' }]]]));
  const { intentId } = context.intent(false);
  const press = await context.press('press', intentId, undefined);
  await context.settle();
  return [{ intentId, key: undefined, effects: 'at-most-once', presses: [press] }];
}

/**
 * Two callers (`entry.callers`) send the same key, one after the other, each with
 * its own intent: a chain that keys its store by the key alone hands the second
 * caller the first one's answer. Each caller presses again once the chain settled.
 * Nobody else had used the key before the first caller's press, so its answer is its
 * own: the second caller's answers must differ from it (and the first caller's later
 * press must replay it, which `replay` checks).
 */
export async function twoCallers(context: ScenarioContext): Promise<IntentRecord[]> {
  const { key } = context.intent();
  const [first, second] = [context.intent().intentId, context.intent().intentId];
  const pressFirst = await context.press('caller 1 press', first, key, { caller: 0 });
  await context.settle();
  const pressSecond = await context.press('caller 2 press', second, key, { caller: 1 });
  await context.settle();
  const laterFirst = await context.press('caller 1 later press', first, key, { caller: 0 });
  const laterSecond = await context.press('caller 2 later press', second, key, { caller: 1 });
  return [
    { intentId: first, key, effects: 'once', presses: [pressFirst], laterPress: laterFirst },
    { intentId: second, key, effects: 'once', presses: [pressSecond], laterPress: laterSecond, otherCallers: [pressFirst] },
  ];
}
