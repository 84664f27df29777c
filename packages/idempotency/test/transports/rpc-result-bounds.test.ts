import { randomUUID } from 'node:crypto';
import { Controller, type INestMicroservice } from '@nestjs/common';
import { ClientProxyFactory, MessagePattern, Payload, RpcException, Transport, type ClientProxy } from '@nestjs/microservices';
import { lastValueFrom } from 'rxjs';
import type { Execution } from '@idempotency-chain/idempotency';
import { CurrentExecution, Idempotent } from '@idempotency-chain/idempotency/nest';
import type { RedisStore } from '@idempotency-chain/idempotency/redis';
import { Recorder } from '../support/recorder';
import { freshKey, settled, startConsumer, transportStore } from './support/charges';
import { HandlerRuns, MAX_RESPONSE_BYTES, memo, notStored, pastTheBound } from './support/result-bounds';

const { hostname: host, port } = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const REDIS = { host, port: Number(port || 6379) };

/** What the record of one value, `{"values":[…]}`, adds to the value's JSON. */
const VALUES_RECORD_BYTES = Buffer.byteLength('{"values":[]}');
/** The answer whose record takes exactly `MAX_RESPONSE_BYTES`. */
const FITS = MAX_RESPONSE_BYTES - VALUES_RECORD_BYTES;
/** What a refusal's payload, `{"status":402,"memo":"xx…"}`, adds to its memo's JSON. */
const STATUS_BYTES = Buffer.byteLength('"status":402,');
const RESULT_NOT_STORED = 'urn:idempotency-chain:problem:result-not-stored';

/** This file's own namespace on the shared Redis: another run's consumer never takes its messages. */
const run = randomUUID().slice(0, 8);
const Patterns = { receipt: `idem.${run}.receipt`, refusal: `idem.${run}.refusal` } as const;

/** A message asking for an answer of `bytes` of JSON, its key in the payload (the Redis transport has no headers). */
interface Ask {
  idempotencyKey: string;
  bytes: number;
}

const runs = new HandlerRuns();

@Controller()
class ReceiptsConsumer {
  @MessagePattern(Patterns.receipt)
  @Idempotent('transport.receipt')
  receipt(@Payload() ask: Ask, @CurrentExecution() execution: Execution) {
    runs.ran(ask.idempotencyKey, execution);
    return memo(ask.bytes);
  }

  /** A final refusal (402) whose payload is `bytes` of JSON, its status included. */
  @MessagePattern(Patterns.refusal)
  @Idempotent('transport.refusal')
  refusal(@Payload() ask: Ask, @CurrentExecution() execution: Execution) {
    runs.ran(ask.idempotencyKey, execution);
    throw new RpcException({ status: 402, ...memo(ask.bytes - STATUS_BYTES) });
  }
}

describe('@Idempotent bounds what a message answer stores by maxResponseBytes (NestJS Redis transport)', () => {
  let microservice: INestMicroservice;
  let client: ClientProxy;
  let store: RedisStore;

  const ask = (pattern: string, key: string, bytes: number) => lastValueFrom(client.send(pattern, { idempotencyKey: key, bytes }));
  const unstorables = () => microservice.get(Recorder).count('unstorable');

  beforeAll(async () => {
    store = transportStore();
    microservice = await startConsumer({ transport: Transport.REDIS, options: REDIS }, [ReceiptsConsumer], {
      store,
      maxResponseBytes: MAX_RESPONSE_BYTES,
    });
    client = ClientProxyFactory.create({ transport: Transport.REDIS, options: REDIS });
    await client.connect();
  });
  afterAll(async () => {
    await client?.close();
    await microservice?.close();
  });

  it('stores and replays an answer whose record takes exactly maxResponseBytes', async () => {
    const key = freshKey('fits');
    const first = await ask(Patterns.receipt, key, FITS);
    const retry = await ask(Patterns.receipt, key, FITS);

    expect(first).toEqual(memo(FITS));
    expect(retry).toEqual(first);
    expect(runs.count(key)).toBe(1);
    const record = await runs.record(store, key);
    expect(record).toMatchObject({ status: 'completed', answer: { status: 'clear', storedBytes: MAX_RESPONSE_BYTES } });
  });

  it.each(pastTheBound(FITS))(
    'sends an answer of %s whole, stores result-not-stored in its place, and refuses a retry without running the handler',
    async (_, bytes) => {
      const key = freshKey('larger');
      const unstorable = unstorables();

      const first = await ask(Patterns.receipt, key, bytes);
      expect(first).toEqual(memo(bytes));
      const record = await runs.record(store, key);
      expect(record).toMatchObject({ status: 'completed' });
      expect(JSON.parse(record.answer!.body!)).toEqual(notStored('result', { values: [memo(bytes)] }));
      expect(unstorables()).toBe(unstorable + 1);

      const retry = await settled(ask(Patterns.receipt, key, bytes));
      expect(retry).toEqual({ error: expect.objectContaining({ type: RESULT_NOT_STORED, status: 500 }) });
      expect(runs.count(key)).toBe(1);
    },
  );

  it('stores and replays a final error within the bound', async () => {
    const key = freshKey('refused');
    const first = await settled(ask(Patterns.refusal, key, 200));
    const retry = await settled(ask(Patterns.refusal, key, 200));

    expect(first).toEqual({ error: { status: 402, ...memo(200 - STATUS_BYTES) } });
    expect(retry).toEqual(first);
    expect(runs.count(key)).toBe(1);
  });

  it('throws a final error past the bound whole to its caller, stores result-not-stored in its place, and refuses a retry', async () => {
    const key = freshKey('refused-larger');
    const unstorable = unstorables();

    const first = await settled(ask(Patterns.refusal, key, 2000));
    expect(first).toEqual({ error: { status: 402, ...memo(2000 - STATUS_BYTES) } });
    const record = await runs.record(store, key);
    expect(JSON.parse(record.answer!.body!)).toEqual(
      notStored('error', { error: { status: 402, payload: { status: 402, ...memo(2000 - STATUS_BYTES) }, rpc: true } }),
    );
    expect(unstorables()).toBe(unstorable + 1);

    const retry = await settled(ask(Patterns.refusal, key, 2000));
    expect(retry).toEqual({ error: expect.objectContaining({ type: RESULT_NOT_STORED, status: 500 }) });
    expect(runs.count(key)).toBe(1);
  });
});
