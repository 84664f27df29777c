import type { Attempt } from '../proxy/attempt';

/** What became of a delivery, in words: the consumer's ack, nack or reject, or the fault that took it. */
const SETTLED: Partial<Record<Attempt['outcome'], string>> = {
  acked: 'ack',
  'ack-lost': 'ack lost',
  'killed-before-ack': 'killed before ack',
  requeued: 'nack, requeued',
  rejected: 'rejected, not requeued',
  unsettled: 'connection closed unsettled',
  'in-flight': 'held',
};

/** A queue delivery's outcome as reports show it (`ack`, `ack lost`, `nack, requeued`...). */
export function settlementText(a: Attempt): string {
  return SETTLED[a.outcome] ?? a.outcome;
}

/**
 * One queue delivery: hop, delivery number (and the one it copies), the broker's tag and
 * redelivered flag, key hash, faults and what the consumer did with it.
 */
export function deliveryLine(a: Attempt): string {
  const copy = a.duplicateOf === undefined ? '' : ` (copy of d${a.duplicateOf})`;
  const redelivered = a.delivery?.redelivered ? ' redelivered' : '';
  const faults = a.faults.length > 0 ? ` [${a.faults.join(', ')}]` : '';
  return `${a.hop} d${a.attempt}${copy} ${deliveryIds(a)}${redelivered} ${a.path} k=${a.keyHash ?? 'none'}${faults} -> ${settlementText(a)}`;
}

/** The deliveries among a scenario's attempts: the queue hop's. */
export function deliveriesOf(attempts: readonly Attempt[]): Attempt[] {
  return attempts.filter((a) => a.delivery !== undefined);
}

/**
 * Which delivery of which message it was, as the broker numbers them: RabbitMQ's
 * delivery tag; JetStream's stream sequence (the message) and delivery count.
 */
export function deliveryIds(a: Attempt): string {
  const d = a.delivery;
  if (d?.streamSequence !== undefined) return `seq=${d.streamSequence} n=${d.deliveryCount ?? '-'}`;
  return `tag=${d?.tag ?? '-'}`;
}
