import { AckPolicy, jetstreamManager, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import { randomBytes } from 'node:crypto';
import { NatsProxy } from '../src/broker/nats-proxy';
import { AttemptLog } from '../src/proxy/attempt-log';
import { queueUnexercised } from '../src/run/queue-checks';
import { freePort } from './support/free-port';

const NATS_URL = process.env.NATS_URL || 'nats://127.0.0.1:4222';

/**
 * A lost ack is exercised only by the redelivery of the message whose ack was lost:
 * another message's redelivery (one the cut connection also held) tests nothing of it.
 */
describe('a lost ack at a NATS queue hop', () => {
  let admin: NatsConnection;
  let manager: JetStreamManager;
  let consumer: NatsConnection | undefined;
  let proxy: NatsProxy | undefined;
  let stream = '';
  beforeAll(async () => {
    admin = await connect({ servers: [NATS_URL] });
    manager = await jetstreamManager(admin);
  });
  afterAll(async () => {
    await consumer?.close().catch(() => undefined);
    await proxy?.stop();
    if (stream) await manager.streams.delete(stream).catch(() => undefined);
    await admin.close();
  });

  it('is not exercised when only another message was redelivered after it', async () => {
    const run = randomBytes(4).toString('hex');
    stream = `VFY_CARRIER_${run}`;
    const subject = `vfy.carrier.${run}`;
    await manager.streams.add({ name: stream, subjects: [subject] });
    await manager.consumers.add(stream, { durable_name: 'c', ack_policy: AckPolicy.Explicit, ack_wait: nanos(1000) });
    const log = new AttemptLog();
    log.context = { scenario: 'lose-ack', intent: 'vfy-1' };
    const port = await freePort();
    proxy = new NatsProxy({
      name: 'consumer',
      host: '127.0.0.1',
      port,
      server: NATS_URL,
      stream,
      consumer: 'c',
      keyHeader: 'idempotency-key',
      log,
    });
    await proxy.start();
    proxy.setPlan(new Map([[1, [{ kind: 'lose-ack' }]]]));
    const js = manager.jetstream();
    await js.publish(subject, 'pressed');
    await js.publish(subject, 'other');
    consumer = await connect({ servers: [`nats://127.0.0.1:${port}`] });
    const c = await (await jetstreamManager(consumer)).jetstream().consumers.get(stream, 'c');
    const first = (await c.next({ expires: 5000 })) as JsMsg;
    const second = (await c.next({ expires: 5000 })) as JsMsg;
    expect([first.string(), second.string()]).toEqual(['pressed', 'other']);
    // The proxy keeps this ack from the server and cuts the connection: "other" is left unacked with it.
    first.ack();
    // The pressed message's ack reaches JetStream another way (a second connection, a retried ack):
    // it is never redelivered, so the lost ack tested nothing.
    // (nats.js's message has its reply subject; its JsMsg type does not say so.)
    admin.publish((first as JsMsg & { reply: string }).reply, '+ACK');
    await admin.flush();
    // "other" is redelivered once its ack wait runs out, to the reconnected consumer.
    for (let redelivered = false; !redelivered;) {
      const again = await c.next({ expires: 2000 }).catch(() => null);
      if (!again) continue;
      expect(again.string()).toBe('other');
      redelivered = again.redelivered;
      again.ack();
    }
    expect(await log.whenQuiet(300, 20_000)).toBe(true);
    expect(await proxy.waiting()).toBe(0);
    const attempts = log.of('lose-ack');
    expect(attempts.map((a) => [a.delivery?.streamSequence, a.delivery?.deliveryCount, a.outcome])).toEqual([
      [1, 1, 'ack-lost'],
      [2, 1, 'unsettled'],
      [2, 2, 'acked'],
    ]);
    const queue = { name: 'consumer', broker: NATS_URL, listen: '', stream, consumer: 'c', keyHeader: 'idempotency-key' };
    expect(queueUnexercised(queue, [{ kind: 'lose-ack' }], attempts)).toEqual([
      expect.stringMatching(/^lose ack at consumer: the broker never redelivered d1 to the consumer/),
    ]);
  }, 60_000);
});
