import type { AttemptOutcome } from '../proxy/attempt';

/** What a JetStream delivery's reply subject tells of it. */
export interface AckSubject {
  stream: string;
  consumer: string;
  /** How many times the message was delivered to this consumer, this one included. */
  deliveryCount: number;
  /** The message's sequence in its stream: the same for every delivery of it. */
  streamSequence: number;
  /** The delivery's sequence at the consumer: a new one for each delivery. */
  consumerSequence: number;
}

/**
 * Reads a JetStream delivery's reply subject, the subject its ack goes to:
 * `$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>`, or the form
 * with a domain and account hash before the stream and a token after
 * (`$JS.ACK.<domain>.<hash>.<stream>...<pending>.<token>`). `undefined` for any other subject.
 */
export function readAckSubject(subject: string | undefined): AckSubject | undefined {
  if (!subject?.startsWith('$JS.ACK.')) return undefined;
  const tokens = subject.split('.');
  const from = tokens.length === 9 ? 2 : tokens.length >= 11 ? 4 : -1;
  if (from < 0) return undefined;
  const [stream = '', consumer = '', ...numbers] = tokens.slice(from, from + 5);
  const [deliveryCount, streamSequence, consumerSequence] = numbers.map(Number) as [number, number, number];
  if (![deliveryCount, streamSequence, consumerSequence].every((n) => Number.isSafeInteger(n) && n > 0)) return undefined;
  return { stream, consumer, deliveryCount, streamSequence, consumerSequence };
}

/**
 * What a consumer's answer on a delivery's reply subject settles, read as JetStream
 * reads it (byte for byte: an answer padded with whitespace is no answer to it):
 * `+ACK`, `+OK` or an empty body acks it, as does `+NXT` asking for the next; `-NAK`
 * (with its delay after a space) hands it back for redelivery, `+TERM` (with its
 * reason) ends it for good; `undefined` for `+WPI` (still working on it) or anything else.
 */
export function settlementOf(payload: Buffer): AttemptOutcome | undefined {
  const answer = payload.toString('latin1');
  if (answer === '' || answer === '+ACK' || answer === '+OK' || answer.startsWith('+NXT')) return 'acked';
  if (answer === '-NAK' || answer.startsWith('-NAK ')) return 'requeued';
  if (answer === '+TERM' || answer.startsWith('+TERM ')) return 'rejected';
  return undefined;
}
