import type { QueueFault } from '../broker/queue-faults';
import { queueSource } from '../broker/queue-proxy';
import type { ChainConfig } from '../config/schema';
import type { IntentRecord, Scenario, ScenarioContext } from './scenario';

/** The scenarios that fault the queue hop's consumer; none without a queue hop. */
export function queueScenarios(config: ChainConfig): Scenario[] {
  const queue = config.queue;
  if (!queue) return [];
  const hop = queue.name;
  return [
    {
      name: `lost-ack@${hop}`,
      family: 'lost-ack',
      description: `${hop}'s consumer handles the first delivery and acks it; its connection is cut before the ack reaches the broker, which redelivers the message.`,
      run: (c) => queuePress(c, { kind: 'lose-ack' }),
    },
    {
      name: `duplicate-delivery@${hop}`,
      family: 'duplicate-delivery',
      description: `The first delivered message is published into ${queueSource(queue)} again while ${hop}'s consumer holds it, and once more after it acked it.`,
      run: (c) => queuePress(c, { kind: 'duplicate-delivery' }),
    },
    {
      name: `kill-before-ack@${hop}`,
      family: 'kill-before-ack',
      description: `${hop}'s consumer handles the first delivery and is killed before its ack reaches the broker; started again, it gets the message redelivered.`,
      run: (c) => queuePress(c, { kind: 'kill-before-ack', crash: () => c.restart(hop) }),
    },
  ];
}

/**
 * One press whose message meets `fault` at its first delivery. The effects counted
 * once the chain settled (the queue drained, no delivery held) are this press's: as in
 * `write-up`, a later press is the `later-press` scenario's question, and here it would
 * add the HTTP side's own answer to the count of what the consumer did with one message.
 */
async function queuePress(context: ScenarioContext, fault: QueueFault): Promise<IntentRecord[]> {
  context.planQueue(new Map([[1, [fault]]]));
  const { intentId, key } = context.intent();
  const press = await context.press('press', intentId, key);
  return [{ intentId, key, effects: key === undefined ? 'at-most-once' : 'once', presses: [press] }];
}
