import { createRedisClient } from '@idempotency-chain/idempotency/redis';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError } from './config-error';
import { bootFailure } from './service-app';
import { freePort } from '@idempotency-chain/local-processes';
import { connectRedis, UnreachableError } from './unreachable';

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

describe('UnreachableError', () => {
  it('never shows the password of the address it names', () => {
    const error = new UnreachableError('PostgreSQL', 'postgres://app:hunter2@db:5432/payments', new Error('connect ETIMEDOUT'));
    expect(error.message).toBe('cannot reach PostgreSQL at postgres://app:***@db:5432/payments: connect ETIMEDOUT');
  });

  it("gives the first reason of an AggregateError, whose own message is empty (Node's connect to localhost)", () => {
    const refused = Object.assign(
      new AggregateError([new Error('connect ECONNREFUSED ::1:5432'), new Error('connect ECONNREFUSED 127.0.0.1:5432')], ''),
      {
        code: 'ECONNREFUSED',
      },
    );
    expect(new UnreachableError('PostgreSQL', 'postgres://localhost/x', refused).message).toBe(
      'cannot reach PostgreSQL at postgres://localhost/x: connect ECONNREFUSED ::1:5432',
    );
  });
});

describe('bootFailure', () => {
  it('prints an unreachable store or a refused configuration as its one line, and anything else with its stack', () => {
    expect(bootFailure(new UnreachableError('Redis', 'redis://127.0.0.1:6390', new Error('connect ECONNREFUSED 127.0.0.1:6390')))).toBe(
      'cannot reach Redis at redis://127.0.0.1:6390: connect ECONNREFUSED 127.0.0.1:6390',
    );
    expect(bootFailure(new ConfigError('IDEMPOTENCY_STORE="memory" is not valid for payments: expected postgres'))).toBe(
      'IDEMPOTENCY_STORE="memory" is not valid for payments: expected postgres',
    );
    const bug = new TypeError('undefined is not a function');
    expect(bootFailure(bug)).toBe(`cannot start: ${bug.stack}`);
  });
});
