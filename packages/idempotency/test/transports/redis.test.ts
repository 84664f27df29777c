import type { INestMicroservice } from '@nestjs/common';
import { ClientProxyFactory, Transport, type ClientProxy } from '@nestjs/microservices';
import { lastValueFrom } from 'rxjs';
import { freshKey, Ledger, Patterns, startConsumer } from './support/charges';
import { conformanceCases, patternCalls } from './support/conformance';

const { hostname: host, port } = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const REDIS = { host, port: Number(port || 6379) };

describe('@Idempotent on the Redis transport (NestJS Redis transport, ioredis)', () => {
  let microservice: INestMicroservice;
  let client: ClientProxy;
  /** A client that sends the key as packet metadata, the out-of-band values NestJS 12 sends with a packet. */
  let metadataClient: ClientProxy;
  /** The key each payload is sent with, by the payload: the hook sees the packet only when it is made. */
  const keys = new WeakMap<object, string>();

  beforeAll(async () => {
    microservice = await startConsumer({ transport: Transport.REDIS, options: REDIS });
    client = ClientProxyFactory.create({ transport: Transport.REDIS, options: REDIS });
    metadataClient = ClientProxyFactory.create({ transport: Transport.REDIS, options: REDIS });
    metadataClient.setOnDispatchHook((packet) => {
      const key = keys.get(packet.data as object);
      if (key !== undefined) packet.metadata = { 'idempotency-key': key };
    });
    await Promise.all([client.connect(), metadataClient.connect()]);
  });
  afterAll(async () => {
    await client?.close();
    await metadataClient?.close();
    await microservice?.close();
  });

  // The Redis transport has no headers of its own: the key travels in the payload.
  conformanceCases(() =>
    patternCalls(
      () => microservice.get(Ledger),
      (pattern, key, body) => lastValueFrom(client.send(pattern, { ...body, idempotencyKey: key })),
    ),
  );

  it('reads the key from the packet metadata, and answers a copy keyed in the payload with the same record', async () => {
    const ledger = microservice.get(Ledger);
    const before = ledger.charges;
    const key = freshKey('metadata');
    const body = { amountCents: 300 };
    keys.set(body, key);
    const first = await lastValueFrom(metadataClient.send(Patterns.charge, body));
    const viaPayload = await lastValueFrom(client.send(Patterns.charge, { amountCents: 300, idempotencyKey: key }));

    expect(first).toEqual({ charge: before + 1, amountCents: 300 });
    expect(viaPayload).toEqual(first);
    expect(ledger.charges).toBe(before + 1);
  });
});
