import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { keySlot } from './key-slot';
import { startPrivateRedis, type PrivateRedis } from '../../test/support/redis';
import { connect } from './redis.test-support';

describe('keySlot, against a private Redis in cluster mode', () => {
  let server: PrivateRedis;
  let redis: Redis;
  beforeAll(async () => {
    server = await startPrivateRedis({ cluster: true });
    redis = await connect(server.url);
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  test('answers as CLUSTER KEYSLOT does, hash tags, empty tags and text beyond ASCII included', async () => {
    const keys = [
      'idem:{P6HCcQ}',
      'idem:{P6HCcQ}:epoch',
      'no-tag',
      'empty-tag:{}x',
      'late-close:{a',
      '{first}{second}',
      'ünïcødé:{ключ}',
      ...Array.from({ length: 200 }, () => `idem:{${randomBytes(32).toString('base64url')}}`),
    ];
    const expected = await Promise.all(keys.map(async (key) => Number(await redis.call('CLUSTER', 'KEYSLOT', key))));
    expect(keys.map(keySlot)).toEqual(expected);
  });
});
