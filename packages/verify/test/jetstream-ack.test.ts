import { readAckSubject, settlementOf } from '../src/broker/jetstream-ack';

describe("a JetStream delivery's reply subject and the consumer's answer on it", () => {
  it('reads the stream, consumer and sequences of both subject forms, and nothing from another subject', () => {
    const read = { stream: 'CHARGES', consumer: 'payments', deliveryCount: 2, streamSequence: 17, consumerSequence: 40 };
    expect(readAckSubject('$JS.ACK.CHARGES.payments.2.17.40.1733390000000000000.3')).toEqual(read);
    // With a domain and an account hash before the stream, a random token after.
    expect(readAckSubject('$JS.ACK.hub.ACCHASH.CHARGES.payments.2.17.40.1733390000000000000.3.tok')).toEqual(read);
    for (const other of [
      undefined,
      '_INBOX.abc',
      '$JS.ACK.CHARGES.payments.x.17.40.1.0',
      '$JS.ACK.CHARGES.payments.0.17.40.1.0',
      '$JS.ACK.a.b.c',
    ]) {
      expect(readAckSubject(other)).toBeUndefined();
    }
  });

  it('reads +OK as an ack and a padded +ACK as no answer, as JetStream does', () => {
    // JetStream acks on "+OK" and ignores "+ACK " or " +ACK" (the message stays pending, redelivered at ack_wait).
    expect(['+OK', '+ACK ', ' +ACK', '+ACK\n'].map((a) => settlementOf(Buffer.from(a)))).toEqual([
      'acked',
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('reads +ACK, an empty answer and +NXT as acks, -NAK as handed back, +TERM as refused, +WPI and garbage as no answer', () => {
    const answers = ['+ACK', '', '+NXT {"batch":1}', '-NAK {"delay":1000000000}', '+TERM reason', '+WPI', 'hello'];
    expect(answers.map((a) => settlementOf(Buffer.from(a)))).toEqual([
      'acked',
      'acked',
      'acked',
      'requeued',
      'rejected',
      undefined,
      undefined,
    ]);
  });
});
