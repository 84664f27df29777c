import { createRequire } from 'node:module';
import type { INestApplication } from '@nestjs/common';
import { Args, Mutation, Resolver } from '@nestjs/graphql';
import { Idempotent } from '@idempotency-chain/idempotency/nest';
import { freshKey, Ledger } from './support/charges';
import { Drivers, post, startGraphqlApp, type DriverName } from './support/graphql-charges';

// The copy of graphql the drivers load (see graphql-charges.ts): a scalar of another copy would be foreign to their schema.
const { GraphQLScalarType, Kind } = createRequire(__filename)('graphql') as typeof import('graphql');

/** An integer of any size as a `bigint`, as graphql-scalars' `BigInt` reads it: what payments use for amounts. */
const BigIntScalar = new GraphQLScalarType<bigint, string>({
  name: 'BigInt',
  serialize: (value) => String(value),
  parseValue: (value) => BigInt(value as string | number),
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.INT && ast.kind !== Kind.STRING) throw new TypeError(`a BigInt is written as an integer, not ${ast.kind}`);
    return BigInt(ast.value);
  },
});

/** A list of `[name, count]` pairs, read as a `Map`: a custom scalar whose value is no plain object. */
const CountsScalar = new GraphQLScalarType<Map<string, number>, Array<[string, number]>>({
  name: 'Counts',
  serialize: (value) => [...(value as Map<string, number>)],
  parseValue: (value) => new Map(value as Array<[string, number]>),
});

@Resolver()
class PaymentsResolver {
  constructor(private readonly ledger: Ledger) {}

  /** A payment of an amount in minor units beyond 2^53, answered as text. */
  @Mutation(() => String)
  @Idempotent('graphql.pay')
  pay(@Args('amount', { type: () => BigIntScalar }) amount: bigint): string {
    this.ledger.charges += 1;
    return `payment-${this.ledger.charges}-${amount}`;
  }

  /** Stock counted per item, answered with how many items it names. */
  @Mutation(() => String)
  @Idempotent('graphql.stock')
  stock(@Args('counts', { type: () => CountsScalar }) counts: Map<string, number>): string {
    this.ledger.charges += 1;
    return `stock-${this.ledger.charges}-${counts.size}`;
  }
}

const PAY = 'mutation Pay($amount: BigInt!) { pay(amount: $amount) }';
const STOCK = 'mutation Stock($counts: Counts!) { stock(counts: $counts) }';

describe.each(Object.keys(Drivers) as DriverName[])('@Idempotent on a mutation with a custom scalar argument (%s)', (driver) => {
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    ({ app, url } = await startGraphqlApp(driver, [PaymentsResolver]));
  });
  afterAll(async () => {
    await app?.close();
  });

  const ledger = () => app.get(Ledger);

  it('runs a mutation with a BigInt argument once and replays it; another amount under the key is refused 422', async () => {
    const before = ledger().charges;
    const key = freshKey('graphql-bigint');
    // 2^53 + 1 and 2^53 are one number as a double: only the bigint tells them apart.
    const pay = (amount: string) => post(url, { query: PAY, variables: { amount } }, { key, user: 'alice' });
    const first = await pay('9007199254740993');
    const retry = await pay('9007199254740993');
    const other = await pay('9007199254740992');

    expect(first.body).toEqual({ data: { pay: `payment-${before + 1}-9007199254740993` } });
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(other.status).toBe(200);
    expect(other.body.data).toBeNull();
    expect(other.body.errors?.[0]).toMatchObject({ path: ['pay'], extensions: { code: 'KEY_REUSED', status: 422 } });
    expect(ledger().charges).toBe(before + 1);
  });

  it('reads a BigInt written in the document as the same argument as one sent as a variable', async () => {
    const before = ledger().charges;
    const key = freshKey('graphql-bigint-literal');
    const first = await post(url, { query: PAY, variables: { amount: '12345678901234567890' } }, { key, user: 'alice' });
    const literal = await post(url, { query: 'mutation { pay(amount: 12345678901234567890) }' }, { key, user: 'alice' });

    expect(first.body).toEqual({ data: { pay: `payment-${before + 1}-12345678901234567890` } });
    expect(literal.body).toEqual(first.body);
    expect(ledger().charges).toBe(before + 1);
  });

  it('fingerprints a Map argument by its entries, whatever their order: other counts under the key are refused 422', async () => {
    const before = ledger().charges;
    const key = freshKey('graphql-map');
    const stock = (counts: Array<[string, number]>) => post(url, { query: STOCK, variables: { counts } }, { key, user: 'alice' });
    const first = await stock([
      ['apples', 3],
      ['pears', 5],
    ]);
    const reordered = await stock([
      ['pears', 5],
      ['apples', 3],
    ]);
    const other = await stock([
      ['apples', 3],
      ['pears', 6],
    ]);

    expect(first.body).toEqual({ data: { stock: `stock-${before + 1}-2` } });
    expect(reordered.body).toEqual(first.body);
    expect(reordered.headers.get('idempotent-replayed')).toBe('true');
    expect(other.body.data).toBeNull();
    expect(other.body.errors?.[0]).toMatchObject({ path: ['stock'], extensions: { code: 'KEY_REUSED', status: 422 } });
    expect(ledger().charges).toBe(before + 1);
  });
});
