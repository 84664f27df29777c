import { randomBytes, randomUUID } from 'node:crypto';
import { channelName } from './channel';
import { createPostgresPool, PostgresStore } from '.';
import { createTestSchema, DATABASE_URL, type TestSchema } from '../../test/support/postgres';
import { eventually, within } from '../../test/support/async';

/** The longest legal schema name: `createTestSchema` appends `_` and 12 hex digits to the prefix. */
const LONGEST_SCHEMA_PREFIX = 'idem_channel_'.padEnd(63 - 13, 'x');

let db: TestSchema;
let store: PostgresStore;
/** Names this store's connections, to find its LISTEN among other runs'. */
const application = `channel-${randomUUID()}`;

beforeAll(async () => {
  db = await createTestSchema(LONGEST_SCHEMA_PREFIX);
  const pool = createPostgresPool(DATABASE_URL, { application_name: application });
  // A poll far past the test's bounds: only NOTIFY wakes the waiter in time.
  store = new PostgresStore({ pool, schema: db.schema, pollIntervalMs: 60_000, sweepIntervalMs: 0, ownsPool: true });
});

afterAll(async () => {
  await store.close();
  await db.drop();
});

describe('channelName', () => {
  test('keeps idempotency:<schema> while it fits in an identifier, and hashes a longer one into 63 bytes', () => {
    expect(channelName('public')).toBe('idempotency:public');
    const longest = 'a'.repeat(63);
    expect(Buffer.byteLength(channelName(longest))).toBeLessThanOrEqual(63);
    expect(channelName(longest)).toMatch(/^idempotency:[0-9a-f]+$/);
    expect(channelName(longest)).not.toBe(channelName(`${'a'.repeat(62)}b`));
  });
});

describe('PostgresStore in a schema of 63 characters', () => {
  test('completes a record, and the NOTIFY wakes its waiter', async () => {
    expect(db.schema).toHaveLength(63);
    const recordKey = randomBytes(16).toString('hex');
    await store.claim({ recordKey, fingerprint: 'fp', owner: 'a', leaseMs: 60_000 });
    const waiting = store.waitForChange(recordKey, 60_000);
    await eventually(
      async () =>
        Number(
          (
            await db.pool.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN %'`, [
              application,
            ])
          ).rows[0].n,
        ) > 0,
      'the store to LISTEN',
    );
    expect(await store.complete(recordKey, 'a', '"done"', 60_000)).toBe(true);
    await within(waiting, 5_000, 'the waiter woken by NOTIFY');
    expect(await store.claim({ recordKey, fingerprint: 'fp', owner: 'b', leaseMs: 60_000 })).toMatchObject({
      status: 'completed',
      result: '"done"',
    });
  });
});
