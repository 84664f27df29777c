import { createRedisClient } from '@idempotency-chain/idempotency/redis';
import { UnreachableError } from '@idempotency-chain/payments';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '@idempotency-chain/local-processes';
import { ConfigError } from './environment';
import { bootFailure, connectRedis } from './unreachable';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('connectRedis', () => {
  it('connects a lazy client to a Redis that answers', async () => {
    const client = createRedisClient(REDIS_URL);
    try {
      await connectRedis(client);
      expect(client.status).toBe('ready');
    } finally {
      await client.quit();
    }
  });

  it('names Redis, its address without the password, and the refused connection; and stops the client', async () => {
    const port = await freePort();
    const client = createRedisClient(`redis://:secret@127.0.0.1:${port}/3`);
    let attempts = 0;
    client.on('connecting', () => (attempts += 1));
    const failed = await connectRedis(client).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(UnreachableError);
    expect((failed as Error).message).toBe(`cannot reach Redis at redis://127.0.0.1:${port}/3: connect ECONNREFUSED 127.0.0.1:${port}`);
    // No reconnection loop left behind to keep the process alive: ioredis's
    // first retry is due 50 ms after the failure; none comes in ten times that.
    // (A slow machine can only delay a retry, never invent one.)
    await sleep(500);
    expect(attempts).toBe(1);
  });
});

describe('bootFailure', () => {
  it('prints an unreachable store or a refused configuration as its one line, and anything else with its stack', () => {
    expect(bootFailure(new UnreachableError('Redis', 'redis://127.0.0.1:6390', new Error('connect ECONNREFUSED 127.0.0.1:6390')))).toBe(
      'cannot reach Redis at redis://127.0.0.1:6390: connect ECONNREFUSED 127.0.0.1:6390',
    );
    expect(bootFailure(new ConfigError('KEY_POLICY="sometimes" is not valid: expected one of none, per-attempt, propagated'))).toBe(
      'KEY_POLICY="sometimes" is not valid: expected one of none, per-attempt, propagated',
    );
    const bug = new TypeError('undefined is not a function');
    expect(bootFailure(bug)).toBe(`cannot start: ${bug.stack}`);
  });
});
