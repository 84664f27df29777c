import { faultedPress } from './faulted';
import type { IntentRecord, ScenarioContext } from './scenario';

/**
 * The deepest service killed after its effect and before its answer, started again,
 * and the chain left to retry. The intent's effects are counted just before the kill
 * and just after the restart, before any retry can add one: a store that keeps its
 * effects in memory loses them there, and the retry that charges again would
 * otherwise bring the final count back to one.
 */
export async function kill(context: ScenarioContext, deepest: string): Promise<IntentRecord[]> {
  const intent = context.intent();
  const aroundKill: { before?: number; after?: number } = {};
  const crash = async () => {
    aroundKill.before = await context.count(intent.intentId);
    await context.restart(deepest);
    aroundKill.after = await context.count(intent.intentId);
  };
  const records = await faultedPress(context, { [deepest]: [{ kind: 'kill', crash }] }, intent);
  const { before, after } = aroundKill;
  return before === undefined || after === undefined ? records : records.map((r) => ({ ...r, aroundKill: { before, after } }));
}
