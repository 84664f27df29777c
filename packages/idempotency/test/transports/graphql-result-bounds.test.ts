import { HttpException, type INestApplication } from '@nestjs/common';
import { Args, Field, Int, Mutation, ObjectType, Resolver } from '@nestjs/graphql';
import type { Execution } from '@idempotency-chain/idempotency';
import { CurrentExecution, Idempotent } from '@idempotency-chain/idempotency/nest';
import type { RedisStore } from '@idempotency-chain/idempotency/redis';
import { freshKey, transportStore } from './support/charges';
import { Drivers, post, startGraphqlApp, type DriverName } from './support/graphql-charges';
import { HandlerRuns, MAX_RESPONSE_BYTES, memo, notStored, pastTheBound } from './support/result-bounds';

/** What a mutation's record, `{"value":…}`, adds to its result's JSON. */
const VALUE_RECORD_BYTES = Buffer.byteLength('{"value":}');
/** The result whose record takes exactly `MAX_RESPONSE_BYTES`. */
const FITS = MAX_RESPONSE_BYTES - VALUE_RECORD_BYTES;

/** A refusal's message of `bytes` characters. */
const refusal = (bytes: number) => `declined ${'x'.repeat(bytes - 'declined '.length)}`;

@ObjectType('Memo')
class Memo {
  @Field()
  memo!: string;
}

const runs = new HandlerRuns();

@Resolver()
class MemoResolver {
  @Mutation(() => Memo)
  @Idempotent('graphql.memo')
  memo(@Args('tag') tag: string, @Args('bytes', { type: () => Int }) bytes: number, @CurrentExecution() execution: Execution) {
    runs.ran(tag, execution);
    return memo(bytes);
  }

  /** A final refusal (402) whose message is `bytes` long. */
  @Mutation(() => Memo, { nullable: true })
  @Idempotent('graphql.refuse')
  refuse(@Args('tag') tag: string, @Args('bytes', { type: () => Int }) bytes: number, @CurrentExecution() execution: Execution): never {
    runs.ran(tag, execution);
    throw new HttpException(refusal(bytes), 402);
  }
}

const MEMO = 'mutation Memo($tag: String!, $bytes: Int!) { memo(tag: $tag, bytes: $bytes) { memo } }';
const REFUSE = 'mutation Refuse($tag: String!, $bytes: Int!) { refuse(tag: $tag, bytes: $bytes) { memo } }';
const REFUSED_AS_NOT_STORED = [
  expect.objectContaining({ extensions: expect.objectContaining({ code: 'RESULT_NOT_STORED', status: 500 }) }),
];

describe.each(Object.keys(Drivers) as DriverName[])('@Idempotent bounds what a mutation stores by maxResponseBytes (%s)', (driver) => {
  let app: INestApplication;
  let url: string;
  let store: RedisStore;

  /** The mutation `query` for `bytes`, under `key`, its tag the key too: what the resolver counts its runs by. */
  const call = (query: string, key: string, bytes: number) => post(url, { query, variables: { tag: key, bytes } }, { key, user: 'alice' });

  beforeAll(async () => {
    store = transportStore();
    ({ app, url } = await startGraphqlApp(driver, [MemoResolver], { module: { store, maxResponseBytes: MAX_RESPONSE_BYTES } }));
  });
  afterAll(async () => {
    await app?.close();
  });

  it('stores and replays a result whose record takes exactly maxResponseBytes', async () => {
    const key = freshKey('graphql-fits');
    const first = await call(MEMO, key, FITS);
    const retry = await call(MEMO, key, FITS);

    expect(first.body).toEqual({ data: { memo: memo(FITS) } });
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(runs.count(key)).toBe(1);
    const record = await runs.record(store, key);
    expect(record).toMatchObject({ status: 'completed', answer: { status: 'clear', storedBytes: MAX_RESPONSE_BYTES } });
  });

  it.each(pastTheBound(FITS))(
    'answers a result of %s whole, stores result-not-stored in its place, and refuses a retry without running the mutation',
    async (_, bytes) => {
      const key = freshKey('graphql-larger');
      const first = await call(MEMO, key, bytes);
      expect(first.body).toEqual({ data: { memo: memo(bytes) } });
      const record = await runs.record(store, key);
      expect(record).toMatchObject({ status: 'completed' });
      expect(JSON.parse(record.answer!.body!)).toEqual(notStored('result', { value: memo(bytes) }));

      const retry = await call(MEMO, key, bytes);
      expect(retry.body.errors).toEqual(REFUSED_AS_NOT_STORED);
      expect(runs.count(key)).toBe(1);
    },
  );

  it('stores and replays a final error within the bound', async () => {
    const key = freshKey('graphql-refused');
    const first = await call(REFUSE, key, 200);
    const retry = await call(REFUSE, key, 200);

    expect(first.body.errors).toEqual([expect.objectContaining({ message: refusal(200) })]);
    expect(retry.body.errors).toEqual([expect.objectContaining({ message: refusal(200) })]);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(runs.count(key)).toBe(1);
  });

  it('answers a final error past the bound whole, stores result-not-stored in its place, and refuses a retry', async () => {
    const key = freshKey('graphql-refused-larger');
    const first = await call(REFUSE, key, 2000);
    expect(first.body.errors).toEqual([expect.objectContaining({ message: refusal(2000) })]);
    const record = await runs.record(store, key);
    expect(JSON.parse(record.answer!.body!)).toEqual(notStored('error', { error: { status: 402, response: refusal(2000) } }));

    const retry = await call(REFUSE, key, 2000);
    expect(retry.body.errors).toEqual(REFUSED_AS_NOT_STORED);
    expect(runs.count(key)).toBe(1);
  });
});
