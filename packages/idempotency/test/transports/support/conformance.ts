import { expect, it } from 'vitest';
import { freshKey, Patterns, settled, type Charge, type Ledger } from './charges';

/** One transport's way of calling the charges consumer, each call carrying its key where that transport carries it. */
export interface TransportCalls {
  ledger: () => Ledger;
  charge: (key: string, body: Charge) => Promise<unknown>;
  decline: (key: string, body: Charge) => Promise<unknown>;
  unavailable: (key: string) => Promise<unknown>;
  /** What the caller receives when a key is sent again with another payload. */
  reuseRefusal: unknown;
  /** What the caller receives after a final decline of 900 cents (the handler's `attempt`-th), first time and on replay. */
  declined: (attempt: number) => unknown;
  /** What the caller receives after the handler's `attempt`-th transient failure. */
  bankDown: (attempt: number) => unknown;
}

/** How many copies of one message the concurrency case sends at once. */
const DUPLICATES = 5;

/**
 * The cases every request/reply transport passes against its real server:
 * one execution per key under concurrent duplicates and redelivery, a
 * reused key refused, a final error replayed and a transient one released,
 * and a replay identical to the first answer.
 */
export function conformanceCases(transport: () => TransportCalls): void {
  it(`runs the handler once for ${DUPLICATES} concurrent copies of a message, and answers each with the same answer`, async () => {
    const calls = transport();
    const ledger = calls.ledger();
    const before = ledger.charges;
    const key = freshKey('concurrent');
    const held = ledger.hold(DUPLICATES);
    const answers = Array.from({ length: DUPLICATES }, () => calls.charge(key, { amountCents: 500 }));
    await held.arrived;
    held.release();

    const [first, ...others] = await Promise.all(answers);
    expect(first).toEqual({ charge: before + 1, amountCents: 500 });
    for (const other of others) expect(other).toEqual(first);
    expect(ledger.charges).toBe(before + 1);
  });

  it('answers a message delivered again after its answer with that answer, without running the handler', async () => {
    const calls = transport();
    const before = calls.ledger().charges;
    const key = freshKey('redelivered');
    const first = await calls.charge(key, { amountCents: 700 });
    const again = await calls.charge(key, { amountCents: 700 });

    expect(again).toEqual(first);
    expect(calls.ledger().charges).toBe(before + 1);
  });

  it('refuses a key sent again with another payload, without running the handler', async () => {
    const calls = transport();
    const key = freshKey('reused');
    await calls.charge(key, { amountCents: 100 });
    const before = calls.ledger().charges;

    const reused = await settled(calls.charge(key, { amountCents: 101 }));
    expect(reused).toEqual({ error: calls.reuseRefusal });
    expect(calls.ledger().charges).toBe(before);
  });

  it('stores a final error and answers a retry with it, without running the handler again', async () => {
    const calls = transport();
    const before = calls.ledger().declines;
    const key = freshKey('declined');
    const first = await settled(calls.decline(key, { amountCents: 900 }));
    const replay = await settled(calls.decline(key, { amountCents: 900 }));

    expect(first).toEqual({ error: calls.declined(before + 1) });
    expect(replay).toEqual(first);
    expect(calls.ledger().declines).toBe(before + 1);
  });

  it('releases the key after a transient error: the retry runs the handler again', async () => {
    const calls = transport();
    const before = calls.ledger().unavailable;
    const key = freshKey('transient');
    const first = await settled(calls.unavailable(key));
    const retry = await settled(calls.unavailable(key));

    expect(first).toEqual({ error: calls.bankDown(before + 1) });
    expect(retry).toEqual({ error: calls.bankDown(before + 2) });
    expect(calls.ledger().unavailable).toBe(before + 2);
  });
}

/**
 * The calls of a transport that routes by string patterns and hands the
 * caller an `RpcException`'s payload as it is (NATS, MQTT, Redis): its
 * refusals are the problem documents.
 */
export function patternCalls(ledger: () => Ledger, call: (pattern: string, key: string, body: object) => Promise<unknown>): TransportCalls {
  return {
    ledger,
    charge: (key, body) => call(Patterns.charge, key, body),
    decline: (key, body) => call(Patterns.decline, key, body),
    unavailable: (key) => call(Patterns.unavailable, key, {}),
    reuseRefusal: expect.objectContaining({ type: 'urn:idempotency-chain:problem:key-reused', status: 422 }),
    declined: (attempt) => ({ status: 402, message: 'declined 900', attempt }),
    bankDown: (attempt) => ({ status: 503, message: 'bank down', attempt }),
  };
}
