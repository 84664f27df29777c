import { randomUUID } from 'node:crypto';
import { Controller, type INestMicroservice } from '@nestjs/common';
import { ClientProxyFactory, EventPattern, NatsRecordBuilder, Payload, Transport, type ClientProxy } from '@nestjs/microservices';
import { AckPolicy, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { lastValueFrom } from 'rxjs';
import { Idempotent } from '@idempotency-chain/idempotency/nest';
import { eventually } from '../support/async';
import { Recorder } from '../support/recorder';
import { ChargesConsumer, freshKey, Ledger, Patterns, startConsumer, type Charge } from './support/charges';
import { conformanceCases, patternCalls } from './support/conformance';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const run = randomUUID().slice(0, 8);
/** The subject a JetStream push consumer delivers the stream's messages to: the consumer app subscribes to it. */
const DELIVERY_SUBJECT = `idem.deliveries.${run}`;

/** A consumer of JetStream deliveries: events, which NestJS's NATS transport cannot acknowledge. */
@Controller()
class DeliveriesConsumer {
  constructor(private readonly ledger: Ledger) {}

  @EventPattern<Record<string, Charge>>(DELIVERY_SUBJECT)
  @Idempotent('transport.delivery')
  async delivered(@Payload() body: Charge) {
    await this.ledger.charge(body);
  }
}

describe('@Idempotent on NATS (NestJS NATS transport, @nats-io clients)', () => {
  let microservice: INestMicroservice;
  let client: ClientProxy;

  /** A message with its key in a NATS header, as a client sets it (any letter case). */
  const record = (key: string, body: object) => {
    const keyed = headers();
    keyed.set('Idempotency-Key', key);
    return new NatsRecordBuilder(body).setHeaders(keyed).build();
  };
  const call = (pattern: string, key: string, body: object) => lastValueFrom(client.send(pattern, record(key, body)));

  beforeAll(async () => {
    microservice = await startConsumer({ transport: Transport.NATS, options: { servers: [NATS_URL] } }, [
      ChargesConsumer,
      DeliveriesConsumer,
    ]);
    client = ClientProxyFactory.create({ transport: Transport.NATS, options: { servers: [NATS_URL] } });
    await client.connect();
  });
  afterAll(async () => {
    await client?.close();
    await microservice?.close();
  });

  conformanceCases(() => patternCalls(() => microservice.get(Ledger), call));

  it('refuses a message with no key in its headers or its payload as a missing key', async () => {
    await expect(lastValueFrom(client.send(Patterns.charge, { amountCents: 1 }))).rejects.toMatchObject({
      type: 'urn:idempotency-chain:problem:missing-key',
      status: 400,
    });
  });

  describe('JetStream redelivery', () => {
    let connection: NatsConnection;
    let manager: JetStreamManager;
    const stream = `idem-transport-${run}`;
    const subject = `idem.ledger.${run}`;

    beforeAll(async () => {
      connection = await connect({ servers: [NATS_URL] });
      manager = await jetstreamManager(connection);
      await manager.streams.add({ name: stream, subjects: [subject] });
      // A push consumer whose deliveries nobody acknowledges: JetStream delivers each message again after ack_wait, twice in all.
      await manager.consumers.add(stream, {
        durable_name: 'payments',
        deliver_subject: DELIVERY_SUBJECT,
        ack_policy: AckPolicy.Explicit,
        ack_wait: 400_000_000,
        max_deliver: 2,
      });
    });
    afterAll(async () => {
      await manager?.streams.delete(stream);
      await connection?.close();
    });

    it('runs the handler once for a message JetStream delivers again, and for the same message published twice', async () => {
      const ledger = microservice.get(Ledger);
      const before = { charges: ledger.charges };
      const keyed = headers();
      keyed.set('idempotency-key', freshKey('jetstream'));
      const js = manager.jetstream();
      const body = JSON.stringify({ amountCents: 1200 });
      // The producer's own retry: the same message, published again, is a second message in the stream.
      await js.publish(subject, body, { headers: keyed });
      await js.publish(subject, body, { headers: keyed });

      // Two messages, each delivered twice (its first delivery never acknowledged): one execution, and three
      // answers from the record, waiting for it when they came while it ran.
      const recorder = microservice.get(Recorder);
      const outcomes = () => recorder.events.filter((event) => event.operation === 'transport.delivery').map((event) => event.outcome);
      await eventually(() => outcomes().length >= 4, 'four deliveries handled');
      expect(outcomes().filter((outcome) => outcome === 'executed')).toHaveLength(1);
      expect(outcomes().filter((outcome) => outcome === 'replayed' || outcome === 'waited')).toHaveLength(3);
      expect(ledger.charges).toBe(before.charges + 1);
      const info = await manager.consumers.info(stream, 'payments');
      expect(info.num_redelivered).toBe(2);
    });
  });
});
