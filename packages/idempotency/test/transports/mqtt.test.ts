import type { INestMicroservice } from '@nestjs/common';
import { ClientProxyFactory, MqttRecordBuilder, Transport, type ClientProxy } from '@nestjs/microservices';
import { lastValueFrom } from 'rxjs';
import { Ledger, Patterns, startConsumer } from './support/charges';
import { conformanceCases, patternCalls } from './support/conformance';

const MQTT_URL = process.env.MQTT_URL ?? 'mqtt://127.0.0.1:1883';

describe('@Idempotent on MQTT 5 (NestJS MQTT transport, Mosquitto)', () => {
  let microservice: INestMicroservice;
  let client: ClientProxy;

  /** A message with its key in an MQTT 5 user property, sent at least once (QoS 1). */
  const record = (key: string, body: object) =>
    new MqttRecordBuilder(body)
      .setQoS(1)
      .setProperties({ userProperties: { 'idempotency-key': key } })
      .build();
  const call = (pattern: string, key: string, body: object) => lastValueFrom(client.send(pattern, record(key, body)));

  beforeAll(async () => {
    microservice = await startConsumer({ transport: Transport.MQTT, options: { url: MQTT_URL, protocolVersion: 5 } });
    client = ClientProxyFactory.create({ transport: Transport.MQTT, options: { url: MQTT_URL, protocolVersion: 5 } });
    await client.connect();
  });
  afterAll(async () => {
    await client?.close();
    await microservice?.close();
  });

  conformanceCases(() => patternCalls(() => microservice.get(Ledger), call));

  it('refuses a key sent twice in the user properties, before any record is claimed', async () => {
    const twice = new MqttRecordBuilder({ amountCents: 1 })
      .setProperties({ userProperties: { 'idempotency-key': ['mqtt-twice-a', 'mqtt-twice-b'] } })
      .build();
    await expect(lastValueFrom(client.send(Patterns.charge, twice))).rejects.toMatchObject({
      type: 'urn:idempotency-chain:problem:invalid-key',
      status: 400,
    });
  });
});
