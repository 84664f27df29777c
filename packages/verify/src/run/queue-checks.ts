import { queueFaultLabel, type QueueFault } from '../broker/queue-faults';
import { queueSource } from '../broker/queue-proxy';
import type { QueueHopConfig } from '../config/schema';
import type { Violation } from '../invariants/check';
import type { Attempt } from '../proxy/attempt';

/**
 * Deliveries the consumer refused for good (nack or reject without requeue, JetStream's
 * `+TERM`): the message was dead-lettered or dropped, its work never done, and no caller
 * told. And messages the broker gave up on by itself (`dropped`: JetStream's
 * `max_deliver` reached), never handled to the end either.
 */
export function queueViolations(queue: QueueHopConfig, attempts: readonly Attempt[], dropped: readonly string[] = []): Violation[] {
  const refused: Violation[] = attempts
    .filter((a) => a.hop === queue.name && a.outcome === 'rejected')
    .map((a) => ({
      invariant: 'delivered',
      intentId: a.intent ?? '(none)',
      message:
        a.delivery?.streamSequence === undefined
          ? `${queue.name} d${a.attempt} (tag ${a.delivery?.tag}) was rejected without requeue: dead-lettered or dropped, its work never done`
          : `${queue.name} d${a.attempt} (stream sequence ${a.delivery.streamSequence}) was terminated (+TERM): JetStream never delivers it again, its work never done`,
    }));
  const lastIntent = attempts.findLast((a) => a.hop === queue.name)?.intent ?? '(none)';
  const gaveUp: Violation[] = dropped.map((message) => ({
    invariant: 'delivered',
    intentId: lastIntent,
    message: `${queue.name}: ${message}`,
  }));
  return [...refused, ...gaveUp];
}

/**
 * The queue faults a scenario planned that did not take effect, each saying what to
 * change: a lost ack that no redelivery followed tested nothing, and would let a
 * consumer that charges every delivery pass.
 */
export function queueUnexercised(queue: QueueHopConfig, planned: readonly QueueFault[], attempts: readonly Attempt[]): string[] {
  const deliveries = attempts.filter((a) => a.hop === queue.name);
  return planned.flatMap((fault) => {
    const label = queueFaultLabel(fault);
    const what = `${label} at ${queue.name}`;
    const carrier = deliveries.find((a) => a.faults.includes(label));
    if (!carrier) {
      return `${what}: no delivery reached the consumer through queue.listen (${queue.listen}); point the consumer's broker URL at it, and check that it reads ${queueSource(queue)}`;
    }
    if (fault.kind === 'duplicate-delivery') {
      const copies = deliveries.filter((a) => a.duplicateOf === carrier.attempt);
      return copies.length >= 2 ? [] : `${what}: ${copies.length} of the 2 copies of d${carrier.attempt} reached the consumer`;
    }
    const expected = fault.kind === 'lose-ack' ? 'ack-lost' : 'killed-before-ack';
    if (carrier.outcome !== expected) {
      return `${what}: the consumer never acked d${carrier.attempt} (it ended ${carrier.outcome}): there was no ack to lose`;
    }
    // JetStream names the message each delivery carries: only the carrier's own redelivery exercises its fault
    // (another message held on the cut connection is redelivered too, and tests nothing of this one).
    const sequence = carrier.delivery?.streamSequence;
    const redelivered = deliveries.some(
      (a) => a.attempt > carrier.attempt && a.delivery?.redelivered && (sequence === undefined || a.delivery.streamSequence === sequence),
    );
    if (redelivered) return [];
    // JetStream redelivers on its own clock, not on the consumer's reconnect: name the setting that decides.
    const wait =
      queue.stream === undefined ? '' : `; JetStream redelivers once consumer ${queue.consumer}'s ack_wait ran out: keep it below that`;
    return `${what}: the broker never redelivered d${carrier.attempt} to the consumer (within settle.timeoutMs)${wait}`;
  });
}
