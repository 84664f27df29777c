import type { INestApplication } from '@nestjs/common';
import { Args, Field, Int, Mutation, ObjectType, Query, Resolver } from '@nestjs/graphql';
import { Idempotent } from '@idempotency-chain/idempotency/nest';
import { freshKey, Ledger } from './support/charges';
import { conformanceCases, type TransportCalls } from './support/conformance';
import {
  comparable,
  Drivers,
  overWebSocket,
  post,
  Receipts,
  startGraphqlApp,
  type DriverName,
  type GraphqlResponse,
} from './support/graphql-charges';

const CHARGE = 'mutation Charge($amountCents: Int!) { charge(amountCents: $amountCents) { charge amountCents } }';
const DECLINE = 'mutation { decline(amountCents: 900) { charge } }';
const UNAVAILABLE = 'mutation { unavailable { charge } }';

/** How many copies of one mutation the concurrency case sends at once. */
const DUPLICATES = 10;

describe.each(Object.keys(Drivers) as DriverName[])('@Idempotent on GraphQL mutations (%s)', (driver) => {
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    ({ app, url } = await startGraphqlApp(driver));
  });
  afterAll(async () => {
    await app?.close();
  });

  const ledger = () => app.get(Ledger);
  /** A mutation's field value, or its first error thrown (message and extensions, as `comparable`), as the conformance cases read a call. */
  const field = async (response: Promise<GraphqlResponse>, name: string): Promise<unknown> => {
    const { body } = await response;
    const error = comparable(body.errors?.[0]);
    if (error) throw Object.assign(new Error(error.message), { extensions: error.extensions });
    return body.data?.[name];
  };
  const charge = (key: string | undefined, amountCents: number, user = 'alice') =>
    post(url, { query: CHARGE, variables: { amountCents } }, { key, user });

  conformanceCases((): TransportCalls => ({
    ledger,
    charge: (key, body) => field(charge(key, body.amountCents), 'charge'),
    decline: (key) => field(post(url, { query: DECLINE }, { key, user: 'alice' }), 'decline'),
    unavailable: (key) => field(post(url, { query: UNAVAILABLE }, { key, user: 'alice' }), 'unavailable'),
    reuseRefusal: expect.objectContaining({
      extensions: expect.objectContaining({ code: 'KEY_REUSED', status: 422 }),
    }),
    declined: (attempt) => expect.objectContaining({ message: `declined 900 (attempt ${attempt})` }),
    bankDown: (attempt) => expect.objectContaining({ message: `bank down (attempt ${attempt})` }),
  }));

  it(`runs a mutation once for ${DUPLICATES} concurrent identical requests, every answer the same`, async () => {
    const before = ledger().charges;
    const key = freshKey('graphql-concurrent');
    const held = ledger().hold(DUPLICATES);
    const answers = Array.from({ length: DUPLICATES }, () => charge(key, 500));
    await held.arrived;
    held.release();

    const responses = await Promise.all(answers);
    for (const response of responses) {
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ data: { charge: { charge: before + 1, amountCents: 500 } } });
    }
    // Every duplicate waited for the first and was answered with its stored result.
    expect(responses.filter((response) => response.headers.get('idempotent-replayed') === 'true')).toHaveLength(DUPLICATES - 1);
    expect(ledger().charges).toBe(before + 1);
  });

  it("replays the stored result through the retry's own selection set: aliases, whitespace and fields chosen are the retry's", async () => {
    const before = ledger().charges;
    const receipts = app.get(Receipts);
    const key = freshKey('graphql-selection');
    const first = await charge(key, 700);
    const reads = receipts.reads;
    const retry = await post(
      url,
      { query: 'mutation   {\n  paid: charge( amountCents: 700 ) { receipt   cents: amountCents }\n}' },
      { key, user: 'alice' },
    );

    expect(retry.body.errors).toBeUndefined();
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual({ data: { paid: { receipt: `receipt-${before + 1}-700`, cents: 700 } } });
    expect(ledger().charges).toBe(before + 1);
    // The field resolver ran again for the replay: only the mutation's own result is stored.
    expect(receipts.reads).toBe(reads + 1);
  });

  it('answers a refusal as a GraphQL error with its code, status and problem document, and HTTP 200', async () => {
    const key = freshKey('graphql-reused');
    await charge(key, 100);
    const before = ledger().charges;
    const reused = await charge(key, 101);

    expect(reused.status).toBe(200);
    expect(reused.body.data).toEqual({ charge: null });
    expect(reused.body.errors).toHaveLength(1);
    expect(reused.body.errors?.[0]).toMatchObject({
      path: ['charge'],
      extensions: {
        code: 'KEY_REUSED',
        status: 422,
        problem: { type: 'urn:idempotency-chain:problem:key-reused', status: 422, title: 'Unprocessable Entity' },
      },
    });
    expect(ledger().charges).toBe(before);
  });

  it('answers a duplicate that may not wait with IN_FLIGHT and its retryAfter, also as Retry-After', async () => {
    const key = freshKey('graphql-in-flight');
    const settle = () => post(url, { query: 'mutation { settle(amountCents: 200) { charge } }' }, { key, user: 'alice' });
    const held = ledger().hold(2);
    const both = [settle(), settle()];
    await held.arrived;
    // One holds the key at the gate; the other is refused at once, whichever claimed first.
    const refused = await Promise.race(both);
    held.release();
    await Promise.all(both);

    expect(refused.status).toBe(200);
    expect(refused.body.errors?.[0]?.extensions).toMatchObject({ code: 'IN_FLIGHT', status: 409, retryAfter: expect.any(Number) });
    expect(refused.headers.get('retry-after')).toBe(String(refused.body.errors?.[0]?.extensions?.retryAfter));
  });

  it('refuses a document with two mutation fields under one key, before either runs', async () => {
    const before = ledger().charges;
    const response = await post(
      url,
      { query: 'mutation { a: charge(amountCents: 1) { charge } b: charge(amountCents: 2) { charge } }' },
      { key: freshKey('graphql-two-fields'), user: 'alice' },
    );

    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({ a: null, b: null });
    for (const error of response.body.errors ?? []) {
      expect(error.extensions).toMatchObject({ code: 'INVALID_REQUEST', status: 400 });
      expect(error.message).toContain('one mutation field');
    }
    expect(response.body.errors).toHaveLength(2);
    expect(ledger().charges).toBe(before);
  });

  it('keeps each caller in its own scope: one key from two callers is two records', async () => {
    const before = ledger().charges;
    const key = freshKey('graphql-scope');
    const alice = await charge(key, 300, 'alice');
    const bob = await charge(key, 301, 'bob');
    const aliceAgain = await charge(key, 300, 'alice');

    expect(alice.body.data).toEqual({ charge: { charge: before + 1, amountCents: 300 } });
    expect(bob.body.data).toEqual({ charge: { charge: before + 2, amountCents: 301 } });
    expect(aliceAgain.body).toEqual(alice.body);
    expect(ledger().charges).toBe(before + 2);
  });

  it('refuses a caller without a principal (SCOPE_UNRESOLVED), without running the mutation', async () => {
    const before = ledger().charges;
    const response = await post(url, { query: CHARGE, variables: { amountCents: 5 } }, { key: freshKey('graphql-anonymous') });

    expect(response.body.errors?.[0]?.extensions).toMatchObject({
      code: 'SCOPE_UNRESOLVED',
      problem: { type: 'urn:idempotency-chain:problem:scope-unresolved' },
    });
    expect(ledger().charges).toBe(before);
  });

  it('refuses a mutation without a key (the module requires one), and a malformed key, without running it', async () => {
    const before = ledger().charges;
    const missing = await charge(undefined, 5);
    const malformed = await charge('k'.repeat(10_000), 5);

    expect(missing.body.errors?.[0]?.extensions).toMatchObject({
      code: 'MISSING_KEY',
      status: 400,
      problem: { type: 'urn:idempotency-chain:problem:missing-key' },
    });
    expect(malformed.body.errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_KEY', status: 400 });
    expect(ledger().charges).toBe(before);
  });

  it('refuses an argument nested deeper than a fingerprint reads with a bounded 400, without running the mutation', async () => {
    const before = ledger().charges;
    // Written out by hand: the client's own JSON.stringify would recurse as deep.
    const note = `${'{"n":'.repeat(5_000)}{}${'}'.repeat(5_000)}`;
    const response = await post(url, `{"query":"mutation($note: JSON!) { annotate(note: $note) }","variables":{"note":${note}}}`, {
      key: freshKey('graphql-deep'),
      user: 'alice',
    });

    expect(response.status).toBe(200);
    expect(response.body.errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_REQUEST', status: 400 });
    expect(ledger().charges).toBe(before);
  });

  it("refuses an argument larger than the platform's body limit before any resolver runs", async () => {
    const before = ledger().charges;
    const arrivals = ledger().arrivals;
    const response = await post(
      url,
      { query: 'mutation($note: JSON!) { annotate(note: $note) }', variables: { note: { text: 'x'.repeat(2 * 1024 * 1024) } } },
      { key: freshKey('graphql-huge'), user: 'alice' },
    );

    expect(response.status).toBe(413);
    expect(ledger().arrivals).toBe(arrivals);
    expect(ledger().charges).toBe(before);
  });
});

/** Every mutation of the class protected by one class-level `@Idempotent`; its query left alone. */
@Resolver()
@Idempotent('graphql.refund')
class RefundsResolver {
  constructor(private readonly ledger: Ledger) {}

  @Query(() => Int)
  refunds(): number {
    return this.ledger.charges;
  }

  @Mutation(() => Int)
  refund(@Args('amountCents', { type: () => Int }) amountCents: number): number {
    this.ledger.charges += 1;
    return amountCents;
  }
}

@Resolver()
class QueryResolver {
  @Query(() => Int)
  @Idempotent('graphql.read')
  balance(): number {
    return 0;
  }

  @Mutation(() => Int)
  noop(): number {
    return 0;
  }
}

describe('@Idempotent on a GraphQL resolver (Mercurius on Fastify)', () => {
  it('protects every mutation of a resolver class marked @Idempotent, and none of its queries', async () => {
    const { app, url } = await startGraphqlApp('Mercurius on Fastify', [RefundsResolver]);
    try {
      const ledger = app.get(Ledger);
      const key = freshKey('graphql-class');
      const refund = () => post(url, { query: 'mutation { refund(amountCents: 40) }' }, { key, user: 'alice' });
      const first = await refund();
      const again = await refund();
      const query = await post(url, { query: '{ refunds }' });

      expect(first.body).toEqual({ data: { refund: 40 } });
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(query.body).toEqual({ data: { refunds: 1 } });
      expect(ledger.charges).toBe(1);
    } finally {
      await app.close();
    }
  });

  it("takes no key from a WebSocket's upgrade request: it would be every mutation's of the connection", async () => {
    const { app, url } = await startGraphqlApp('Mercurius on Fastify', [], { driver: { subscription: { fullWsTransport: true } } });
    try {
      const ledger = app.get(Ledger);
      const charge = 'mutation { charge(amountCents: 250) { charge } }';
      const answers = await overWebSocket(url, [charge, charge], { key: freshKey('graphql-ws'), user: 'alice' });

      // The module requires a key: neither charge runs, neither is answered with the other's.
      expect(answers).toHaveLength(2);
      for (const answer of answers) {
        expect(answer.data).toEqual({ charge: null });
        expect(answer.errors?.[0]?.extensions).toMatchObject({ code: 'MISSING_KEY', status: 400 });
      }
      expect(ledger.charges).toBe(0);
    } finally {
      await app.close();
    }
  });

  it('refuses at boot an @Idempotent query, naming it: only mutations are stored', async () => {
    await expect(startGraphqlApp('Mercurius on Fastify', [QueryResolver])).rejects.toThrow(
      'QueryResolver.balance: of a GraphQL resolver, only a mutation can be protected',
    );
  });
});

describe.each(Object.keys(Drivers) as DriverName[])('@Idempotent on batched GraphQL requests (%s)', (driver) => {
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    ({ app, url } = await startGraphqlApp(driver, [], { driver: { allowBatchedQueries: true, allowBatchedHttpRequests: true } }));
  });
  afterAll(async () => {
    await app?.close();
  });

  /** POST a batch of operations under one key, as alice; the answer of each operation, in order. */
  const batch = async (operations: object[], key: string) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key, 'x-user': 'alice' },
      body: JSON.stringify(operations),
    });
    return (await response.json()) as GraphqlResponse['body'][];
  };
  const charge = { query: CHARGE, variables: { amountCents: 250 } };

  it('refuses a batch of two operations under one key, before either runs: two identical charges are not one', async () => {
    const ledger = app.get(Ledger);
    const before = ledger.charges;
    const answers = await batch([charge, charge], freshKey('graphql-batch'));

    expect(answers).toHaveLength(2);
    for (const answer of answers) {
      expect(answer.data).toEqual({ charge: null });
      expect(answer.errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_REQUEST', status: 400 });
    }
    expect(ledger.charges).toBe(before);
  });

  it('protects a batch of one operation as a single request', async () => {
    const ledger = app.get(Ledger);
    const before = ledger.charges;
    const key = freshKey('graphql-batch-one');
    const first = await batch([charge], key);
    const retry = await batch([charge], key);

    expect(first).toEqual([{ data: { charge: { charge: before + 1, amountCents: 250 } } }]);
    expect(retry).toEqual(first);
    expect(ledger.charges).toBe(before + 1);
  });
});

@ObjectType('Delivery')
class Delivery {
  @Field(() => Int)
  delivery!: number;

  /** The receiver's HTTP status: data of the answer, not its status. */
  @Field(() => Int)
  statusCode!: number;
}

/** A webhook sent once per call, answering the receiver's status as data. */
@Resolver()
class WebhooksResolver {
  constructor(private readonly ledger: Ledger) {}

  @Mutation(() => Delivery)
  @Idempotent('graphql.deliver')
  deliver(@Args('statusCode', { type: () => Int }) statusCode: number): Delivery {
    this.ledger.charges += 1;
    return { delivery: this.ledger.charges, statusCode };
  }
}

describe.each(Object.keys(Drivers) as DriverName[])('@Idempotent on a mutation answering a statusCode as data (%s)', (driver) => {
  it('stores and replays it: the mutation ran, a 503 in its data does not release the key', async () => {
    const { app, url } = await startGraphqlApp(driver, [WebhooksResolver]);
    try {
      const ledger = app.get(Ledger);
      const key = freshKey('graphql-status-data');
      const deliver = () => post(url, { query: 'mutation { deliver(statusCode: 503) { delivery statusCode } }' }, { key, user: 'alice' });
      const first = await deliver();
      const retry = await deliver();

      expect(first.body).toEqual({ data: { deliver: { delivery: 1, statusCode: 503 } } });
      expect(retry.body).toEqual(first.body);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(ledger.charges).toBe(1);
    } finally {
      await app.close();
    }
  });
});
