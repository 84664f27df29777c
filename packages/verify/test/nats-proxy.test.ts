import { AckPolicy, jetstreamManager, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { connect, headers, nanos, type NatsConnection } from '@nats-io/transport-node';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { connect as tcpConnect } from 'node:net';
import { NatsProxy } from '../src/broker/nats-proxy';
import { keyHash } from '../src/proxy/attempt';
import { AttemptLog } from '../src/proxy/attempt-log';
import { queueUnexercised, queueViolations } from '../src/run/queue-checks';
import { freePort } from './support/free-port';

const NATS_URL = process.env.NATS_URL || 'nats://127.0.0.1:4222';

/**
 * The NATS proxy on the real NATS server, between it and a nats.js JetStream consumer:
 * what it reads of each delivery and of the consumer's answers, and what it does with
 * a consumer that speaks no NATS or a message JetStream gives up on.
 */
describe('the NATS queue proxy', () => {
  let admin: NatsConnection;
  let manager: JetStreamManager;
  const streams: string[] = [];
  const proxies: NatsProxy[] = [];
  const consumers: NatsConnection[] = [];
  beforeAll(async () => {
    admin = await connect({ servers: [NATS_URL] });
    manager = await jetstreamManager(admin);
  });
  afterAll(async () => {
    for (const c of consumers) await c.close().catch(() => undefined);
    for (const p of proxies) await p.stop();
    for (const s of streams) await manager.streams.delete(s).catch(() => undefined);
    await admin.close();
  });

  /** A fresh stream and consumer, a proxy for them on a free port, and a log in a scenario. */
  async function rig(consumer: { ack_policy?: AckPolicy; max_deliver?: number; deliver_subject?: string } = {}) {
    const run = randomBytes(4).toString('hex');
    const stream = `VFY_PROXY_${run}`;
    const subject = `vfy.proxy.${run}`;
    streams.push(stream);
    await manager.streams.add({ name: stream, subjects: [subject] });
    await manager.consumers.add(stream, { durable_name: 'c', ack_policy: AckPolicy.Explicit, ack_wait: nanos(1000), ...consumer });
    const log = new AttemptLog();
    log.context = { scenario: 'settlements', intent: 'vfy-1' };
    const port = await freePort();
    const proxy = new NatsProxy({
      name: 'consumer',
      host: '127.0.0.1',
      port,
      server: NATS_URL,
      stream,
      consumer: 'c',
      keyHeader: 'idempotency-key',
      log,
    });
    proxies.push(proxy);
    const queue = { name: 'consumer', broker: NATS_URL, listen: '', stream, consumer: 'c', keyHeader: 'idempotency-key' };
    return { stream, subject, proxy, log, port, queue };
  }

  /** A nats.js consumer connected through the proxy. */
  async function through(port: number) {
    const connection = await connect({ servers: [`nats://127.0.0.1:${port}`] });
    consumers.push(connection);
    return connection;
  }

  it("logs each delivery with its stream sequence, count and key hash, and ends it with the consumer's +ACK, -NAK or +TERM", async () => {
    const { stream, subject, proxy, log, port, queue } = await rig();
    await proxy.start();
    const keyed = headers();
    keyed.set('Idempotency-Key', 'key-a');
    const js = manager.jetstream();
    await js.publish(subject, 'a', { headers: keyed });
    await js.publish(subject, 'b');
    const c = await (await jetstreamManager(await through(port))).jetstream().consumers.get(stream, 'c');
    // a is handed back, then terminated on its redelivery; b is acked. Which of a's redelivery and b comes first is JetStream's choice.
    for (let answered = 0; answered < 3;) {
      const message: JsMsg | null = await c.next({ expires: 5000 });
      if (!message) continue;
      answered += 1;
      if (message.string() === 'a' && !message.redelivered) message.nak();
      else if (message.string() === 'a') message.term();
      else message.ack();
    }
    expect(await log.whenQuiet(200, 10_000)).toBe(true);
    expect(await proxy.waiting()).toBe(0);
    const deliveries = log.of('settlements').map((a) => ({
      keyHash: a.keyHash,
      sequence: a.delivery?.streamSequence,
      count: a.delivery?.deliveryCount,
      redelivered: a.delivery?.redelivered,
      outcome: a.outcome,
    }));
    expect(deliveries[0]).toEqual({ keyHash: keyHash('key-a'), sequence: 1, count: 1, redelivered: false, outcome: 'requeued' });
    expect(deliveries.slice(1)).toEqual(
      expect.arrayContaining([
        { keyHash: keyHash('key-a'), sequence: 1, count: 2, redelivered: true, outcome: 'rejected' },
        { keyHash: null, sequence: 2, count: 1, redelivered: false, outcome: 'acked' },
      ]),
    );
    // The message terminated is a broken invariant: its work was never done.
    expect(queueViolations(queue, log.of('settlements'))).toEqual([
      {
        invariant: 'delivered',
        intentId: 'vfy-1',
        message: expect.stringMatching(/^consumer d\d \(stream sequence 1\) was terminated \(\+TERM\)/) as string,
      },
    ]);
    expect(proxy.problems).toEqual([]);
  });

  it('reads a push consumer too: its ack lost, JetStream pushes the message again to the reconnected consumer', async () => {
    const inbox = `vfy.push.${randomBytes(4).toString('hex')}`;
    const { subject, proxy, log, port } = await rig({ deliver_subject: inbox });
    await proxy.start();
    proxy.setPlan(new Map([[1, [{ kind: 'lose-ack' }]]]));
    const connection = await through(port);
    connection.subscribe(inbox, {
      callback: (_error, message) => {
        message.respond('+ACK');
      },
    });
    await connection.flush();
    const acked = new Promise<void>((resolve) => {
      const stop = log.onChange(() => {
        if (!log.of('settlements').some((a) => a.outcome === 'acked')) return;
        stop();
        resolve();
      });
    });
    await manager.jetstream().publish(subject, 'a');
    await acked;
    expect(await log.whenQuiet(200, 10_000)).toBe(true);
    const deliveries = log.of('settlements').map((a) => [a.delivery?.streamSequence, a.delivery?.deliveryCount, a.outcome]);
    expect(deliveries).toEqual([
      [1, 1, 'ack-lost'],
      [1, 2, 'acked'],
    ]);
  }, 60_000);

  it('closes a connection that speaks no NATS, and says why', async () => {
    const { proxy, port } = await rig();
    await proxy.start();
    const socket = tcpConnect({ host: '127.0.0.1', port });
    socket.resume();
    await once(socket, 'connect');
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await once(socket, 'close');
    expect(proxy.problems).toEqual([
      'queue hop consumer: unreadable NATS from the consumer, connection closed: unknown operation "GET": not NATS',
    ]);
  });

  it('reports a message JetStream stopped delivering at max_deliver, its ack lost, as not delivered', async () => {
    const { stream, subject, proxy, log, port, queue } = await rig({ max_deliver: 1 });
    await proxy.start();
    proxy.setPlan(new Map([[1, [{ kind: 'lose-ack' }]]]));
    await manager.jetstream().publish(subject, 'a');
    const c = await (await jetstreamManager(await through(port))).jetstream().consumers.get(stream, 'c');
    const message = await c.next({ expires: 5000 });
    message?.ack();
    // JetStream gives a message up when it would redeliver it, to a consumer pulling again (reconnected after the cut).
    const deadline = Date.now() + 45_000;
    while (proxy.dropped.length === 0 && Date.now() < deadline) {
      const again = await c.next({ expires: 1000 }).catch(() => null);
      expect(again).toBeNull();
    }
    expect(await proxy.waiting()).toBe(0);
    expect(log.of('settlements').map((a) => a.outcome)).toEqual(['ack-lost']);
    // No redelivery followed the lost ack: the fault tested nothing, and says which setting decides.
    expect(queueUnexercised(queue, [{ kind: 'lose-ack' }], log.of('settlements'))).toEqual([
      "lose ack at consumer: the broker never redelivered d1 to the consumer (within settle.timeoutMs); JetStream redelivers once consumer c's ack_wait ran out: keep it below that",
    ]);
    expect(queueViolations(queue, log.of('settlements'), proxy.dropped)).toEqual([
      {
        invariant: 'delivered',
        intentId: 'vfy-1',
        message: 'consumer: stream sequence 1 reached max_deliver after 1 deliveries: JetStream stopped delivering it',
      },
    ]);
  }, 60_000);

  it('refuses a consumer that acks nothing: there is no ack to lose', async () => {
    const { proxy } = await rig({ ack_policy: AckPolicy.None });
    await expect(proxy.start()).rejects.toThrow(
      'queue hop consumer: consumer "c" acks nothing (ack_policy none): there is no ack to lose or hold',
    );
  });
});
