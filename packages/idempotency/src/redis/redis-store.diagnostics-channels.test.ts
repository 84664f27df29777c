import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Redis } from 'ioredis';
// Through the entries a user imports, subscribed by name as an APM does.
import { IdempotencyCoordinator } from '@idempotency-chain/idempotency';
import { IdempotencyChannel } from '@idempotency-chain/idempotency/diagnostics-channel';
import { RedisStore } from '@idempotency-chain/idempotency/redis';
import { startPrivateRedis, type PrivateRedis } from '../../test/support/redis';

const ANSWER = JSON.stringify({ card: '4242-secret-answer-of-customer-A' });
const CLAIM_ERROR = `tracing:${IdempotencyChannel.Claim}:error`;

/**
 * ioredis hangs the failed command on its errors (`command.args`: the
 * record key, the owner token, the answer being stored). A subscriber to
 * the package's channels is any code in the process: it must hear of the
 * error's name and message, never of those arguments.
 */
describe('the diagnostics channels, when real Redis fails a command', () => {
  let redis: PrivateRedis;
  let admin: Redis;
  let client: Redis;
  let store: RedisStore;
  let coordinator: IdempotencyCoordinator;
  const heard: unknown[] = [];
  const hear = (message: unknown) => heard.push(message);

  beforeAll(async () => {
    redis = await startPrivateRedis();
    admin = new Redis(redis.url);
    client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    store = new RedisStore({ client });
    // A short lease: a completion the store keeps refusing is given up within it.
    coordinator = new IdempotencyCoordinator({ service: 'payments', store, replayCache: false, defaults: { leaseMs: 1500 } });
    subscribe(IdempotencyChannel.Outcome, hear);
    subscribe(CLAIM_ERROR, hear);
  });
  afterAll(async () => {
    unsubscribe(IdempotencyChannel.Outcome, hear);
    unsubscribe(CLAIM_ERROR, hear);
    await store.close();
    client.disconnect();
    admin.disconnect();
    await redis.stop();
  });
  beforeEach(async () => {
    heard.length = 0;
    await admin.config('SET', 'maxmemory', '0');
  });

  /** Every error heard, with every property of its own and of its causes, as a subscriber could serialise it. */
  function errorsHeard(): string {
    const own = (error: unknown): unknown =>
      error instanceof Error
        ? {
            ...Object.fromEntries(Object.getOwnPropertyNames(error).map((name) => [name, (error as never)[name]])),
            cause: own(error.cause),
          }
        : error;
    return JSON.stringify(heard.map((message) => own((message as { error?: unknown }).error)));
  }

  it('publishes a completion the store refuses without the answer, the record key or the owner', async () => {
    const begun = await coordinator.begin({ operation: 'payments.charge', key: 'order-42', fingerprint: 'f' });
    if (!begun.execution) throw new Error('expected a claim');
    // A full Redis refuses writes: the completion's script fails with OOM, and ioredis's error names its arguments.
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    await admin.config('SET', 'maxmemory', '1');
    // Not stored: the execution reports it (the app's own error handling is unchanged by the channels).
    await begun.execution.complete(ANSWER).catch(() => undefined);

    const errors = errorsHeard();
    expect(errors).toContain('OOM');
    expect(errors).not.toContain('4242-secret-answer-of-customer-A');
    expect(errors).not.toContain(coordinator.recordKey('payments.charge', '', 'order-42'));
    expect(errors).not.toContain('"command"');
  });

  it('publishes a claim the store refuses without its record key, and the caller still gets the store error', async () => {
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    await admin.config('SET', 'maxmemory', '1');
    const claiming = coordinator.begin({ operation: 'payments.charge', key: 'order-43', fingerprint: 'f' });
    await expect(claiming).rejects.toThrow();

    const claimErrors = heard.filter((message) => (message as { result?: unknown; error?: unknown }).error !== undefined);
    expect(claimErrors.length).toBeGreaterThan(0);
    const errors = errorsHeard();
    expect(errors).toContain('OOM');
    expect(errors).not.toContain(coordinator.recordKey('payments.charge', '', 'order-43'));
    expect(errors).not.toContain('"command"');
  });
});
