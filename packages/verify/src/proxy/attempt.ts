import { createHash } from 'node:crypto';

/**
 * How an attempt ended, as the proxy saw it.
 *
 * @public
 */
export type AttemptOutcome =
  /** The upstream answered and the caller got the answer. */
  | 'answered'
  /** The upstream answered; the proxy reset the caller's connection instead of replying. */
  | 'reply-lost'
  /** The proxy reset the caller's connection before the upstream saw the request. */
  | 'reset'
  /** The proxy answered 503 itself; the upstream never saw the request. */
  | 'unavailable'
  /** The upstream could not be reached or broke off; the caller's connection was reset. */
  | 'upstream-failed'
  /** The upstream answered but the caller had already hung up (its timeout). */
  | 'caller-gone'
  /** A queue delivery the consumer acked, and the ack reached the broker. */
  | 'acked'
  /** A queue delivery the consumer acked; the queue proxy cut its connection instead of passing the ack on (`lost-ack`). */
  | 'ack-lost'
  /** A queue delivery whose consumer was killed after its ack was sent and before it reached the broker. */
  | 'killed-before-ack'
  /** A queue delivery the consumer handed back (nack or reject with requeue, JetStream's `-NAK`) or held on a channel that closed: the broker delivers it again. */
  | 'requeued'
  /** A queue delivery the consumer refused for good (nack or reject without requeue, JetStream's `+TERM`): dead-lettered or dropped. */
  | 'rejected'
  /** The consumer's connection closed while it held the delivery unsettled: the broker delivers it again. */
  | 'unsettled';

/**
 * A queue delivery as the queue proxy read it on the consumer's connection.
 *
 * @public
 */
export interface Delivery {
  /**
   * The broker's delivery tag, counted per channel of the consumer's connection; from
   * NATS JetStream, the consumer sequence (a new one for each delivery).
   */
  tag: number;
  /** The channel of the consumer's connection it was delivered on; from NATS, the subscription id. */
  channel: number;
  /**
   * The broker's flag: delivered before and not acked (a lost ack, a crashed consumer);
   * from JetStream, a delivery count above 1.
   */
  redelivered: boolean;
  /** From JetStream: the message's sequence in its stream, the same for each delivery of it. */
  streamSequence?: number;
  /** From JetStream: how many times the message was delivered to the consumer, this one included. */
  deliveryCount?: number;
}

/**
 * One attempt at one hop, as its fault proxy saw it; at a queue hop, one delivery
 * of a message to its consumer.
 *
 * @public
 */
export interface Attempt {
  /** Order of arrival over the whole run. */
  seq: number;
  /** Scenario running when the attempt arrived. */
  scenario: string;
  /** Intent the caller was pressing when the attempt arrived (several may be in flight in one scenario). */
  intent: string | undefined;
  /** Hop name from the config. */
  hop: string;
  /** 1-based attempt number at this hop within the scenario. */
  attempt: number;
  /** Set when this attempt is a copy the proxy delivered itself (`duplicate` fault, `duplicate-delivery`). */
  duplicateOf?: number;
  /** Set on the queue hop's attempts: each is a delivery to the consumer (`method` is `deliver`, `path` the queue). */
  delivery?: Delivery;
  /**
   * Attempts at this hop that were still in its service (sent, not yet answered) when
   * this one was sent there; absent when none. What shows that a duplicate or a retry
   * reached the service while the first attempt was still running.
   */
  concurrentWith?: number[];
  method: string;
  path: string;
  /** First 8 hex digits of the SHA-256 of the idempotency key; `null` when no key was sent. */
  keyHash: string | null;
  /** Labels of the faults applied. */
  faults: string[];
  /** Upstream's status, `null` when it never answered. */
  status: number | null;
  outcome: AttemptOutcome | 'in-flight';
  /** Milliseconds since the run started. */
  startedMs: number;
  endedMs: number | null;
}

/**
 * Hashes a key for reports: keys can be bearer-like secrets in some systems, and a
 * short hash is enough to see which attempts share one.
 */
export function keyHash(key: string | undefined): string | null {
  if (key === undefined || key === '') return null;
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}
