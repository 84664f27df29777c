import { PrivateRedis, redisCommand } from '@idempotency-chain/local-processes';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Answer, bootLabService, chargeCount, type LabService, post } from '../testing';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Bound on the ledger's client reconnecting once its Redis is back, on a loaded machine. */
const RECONNECT_BOUND_MS = 30_000;

/**
 * payments as the lab runs it on Redis, with the lab's Redis ledger. The
 * records stay on the shared Redis; the ledger is on a Redis of the test's
 * own (`LEDGER_REDIS_URL`), which it stops and pauses: only the ledger
 * write fails.
 */
describe("payments in the lab when its ledger's Redis does not answer", () => {
  let ledgerRedis: PrivateRedis;
  let payments: LabService;
  beforeAll(async () => {
    ledgerRedis = await PrivateRedis.start();
    payments = await bootLabService('payments', {
      IDEMPOTENCY_STORE: 'redis',
      REDIS_URL,
      LEDGER_REDIS_URL: ledgerRedis.url,
      IDEMPOTENCY_RETENTION_MS: '600000', // what the test leaves on the shared Redis goes within minutes
    });
  });
  afterAll(async () => {
    await payments?.app.close();
    await ledgerRedis?.stop();
  });

  const order = () => ({ orderId: `o-${randomUUID()}`, account: 'acct-1', amountCents: 500 });
  const charge = (body: unknown, key: string) => post(payments, '/charges', body, key);

  /** A 503 the orders service retries: a problem document with Retry-After, executed rather than replayed. */
  function expectRetryable503(answer: Answer): void {
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(answer.headers.get('content-type')).toContain('application/problem+json');
    expect(JSON.parse(answer.text)).toMatchObject({ status: 503, type: 'urn:idempotency-chain:problem:store-unavailable' });
    expect(answer.headers.get('idempotent-replayed')).toBeNull();
  }

  it('answers 503 with Retry-After while the ledger is down, stores no answer, and charges once on the retry after it is back', async () => {
    const body = order();
    const key = randomUUID();
    await ledgerRedis.stop();

    expectRetryable503(await charge(body, key));
    // Not stored as the key's answer: the same request executes again (a stored one would be replayed).
    expectRetryable503(await charge(body, key));

    await ledgerRedis.start();
    // Retried as orders would, with the same key, after Retry-After, until the ledger's client has reconnected.
    const deadline = Date.now() + RECONNECT_BOUND_MS;
    let paid = await charge(body, key);
    while (paid.status === 503 && Date.now() < deadline) {
      expectRetryable503(paid);
      await sleep(1000);
      paid = await charge(body, key);
    }
    expect(paid.status).toBe(201);
    expect(paid.headers.get('idempotent-replayed')).toBeNull();
    expect(await chargeCount(payments, body.orderId)).toBe(1);

    const replayed = await charge(body, key);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.text).toBe(paid.text);
    expect(await chargeCount(payments, body.orderId)).toBe(1);
  });

  it('answers 503 while its Redis is a read-only replica (a failover under way), and charges once when it is a master again', async () => {
    const body = order();
    const key = randomUUID();
    const master = await PrivateRedis.start();
    try {
      expect(await redisCommand(ledgerRedis.port, ['REPLICAOF', '127.0.0.1', String(master.port)])).toBe('+OK');
      expectRetryable503(await charge(body, key)); // READONLY: Redis refused, nothing was written
      expect(await redisCommand(ledgerRedis.port, ['REPLICAOF', 'NO', 'ONE'])).toBe('+OK');
    } finally {
      await master.stop();
    }
    const paid = await charge(body, key);
    expect(paid.status).toBe(201);
    expect(await chargeCount(payments, body.orderId)).toBe(1);
  });

  it('answers 503 when the write times out on a paused Redis; the retry gets the charge that landed after all', async () => {
    const body = order();
    const key = randomUUID();
    await ledgerRedis.pause();
    let first: Answer;
    try {
      first = await charge(body, key); // the client's command timeout (1 s) answers before Redis does
    } finally {
      ledgerRedis.resume();
    }
    expectRetryable503(first);

    // Woken, Redis runs the write it was sent: the outcome the 503 could not know.
    const deadline = Date.now() + RECONNECT_BOUND_MS;
    while ((await chargeCount(payments, body.orderId)) === 0 && Date.now() < deadline) await sleep(50);
    const [landed] = (
      (await (
        await fetch(`${payments.url}/charges?orderId=${body.orderId}`, { headers: { authorization: payments.authorization } })
      ).json()) as { charges: Array<{ chargeId: string }> }
    ).charges;
    expect(landed).toBeDefined();

    const retry = await charge(body, key);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(JSON.parse(retry.text)).toMatchObject({ orderId: body.orderId, chargeId: landed!.chargeId });
    expect(await chargeCount(payments, body.orderId)).toBe(1);
  });
});
