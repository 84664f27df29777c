import { randomUUID } from 'node:crypto';
import { createTestSchema, type TestSchema } from '../../test/support/postgres';
import { IdempotencyCoordinator, type RunRequest } from '../coordinator';
import { isIdempotencyError, StoredAnswerUnreadableError } from '../errors';
import {
  answerTo,
  BODY_MARKER,
  describeEncryptionAtRest,
  failure,
  HEADER_MARKER,
  K1,
  reuseKeyForAnotherBody,
  type RawRecords,
} from '../encryption.test-support';
import type { Execution } from '../execution';
import { PostgresStore, postgresTransaction } from '.';

let db: TestSchema;
let store: PostgresStore;

beforeAll(async () => {
  db = await createTestSchema('idem_enc');
  store = new PostgresStore({ pool: db.pool, schema: db.schema, pollIntervalMs: 10_000 });
});

afterAll(async () => {
  await store.close();
  await db.drop();
});

/** The row as the database keeps it: every column, as text. */
async function row(recordKey: string): Promise<Record<string, string | null>> {
  const { rows } = await db.pool.query<{ row: Record<string, string | null> }>(
    `SELECT json_build_object('store_key', store_key, 'status', status, 'fingerprint', fingerprint, 'owner', owner,
            'epoch', epoch::text, 'result', result, 'expires_at', expires_at::text) AS row
       FROM "${db.schema}".idempotency_records WHERE store_key = $1`,
    [recordKey],
  );
  if (!rows[0]) throw new Error(`no row for ${recordKey}`);
  return rows[0].row;
}

const records = (): RawRecords => ({
  store,
  read: row,
  readResult: async (recordKey) => {
    const { result } = await row(recordKey);
    if (result === null || result === undefined) throw new Error(`no stored answer at ${recordKey}`);
    return result;
  },
  writeResult: async (recordKey, result) =>
    void (await db.pool.query(`UPDATE "${db.schema}".idempotency_records SET result = $2 WHERE store_key = $1`, [recordKey, result])),
});

describeEncryptionAtRest('PostgreSQL (the idempotency_records row)', records);

describe('encryption at rest: PostgreSQL transactional completion', () => {
  beforeAll(() => db.pool.query(`CREATE TABLE "${db.schema}".ledger (id serial PRIMARY KEY, order_id text NOT NULL)`));
  const transactional = () =>
    new IdempotencyCoordinator({
      service: 'payments',
      store,
      defaults: { transactional: true },
      replayCache: false,
      encryption: { keys: [K1] },
    });
  const ledgerRows = async (orderId: string): Promise<number> => {
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM "${db.schema}".ledger WHERE order_id = $1`, [orderId]);
    return rows[0].n as number;
  };

  test('the answer completed in the side effect’s transaction is stored encrypted, and replays', async () => {
    const coordinator = transactional();
    const request = { operation: 'payments.charge', key: randomUUID(), fingerprint: 'fp' };
    const charge = async (execution: Parameters<Parameters<typeof coordinator.run>[1]>[0]) => {
      const { rows } = await postgresTransaction(execution).query(`INSERT INTO "${db.schema}".ledger (order_id) VALUES ($1) RETURNING id`, [
        request.key,
      ]);
      return { statusCode: 201, headers: { location: `/charges/${HEADER_MARKER}` }, body: { id: rows[0].id, holder: BODY_MARKER } };
    };
    const first = await coordinator.run(request, charge);
    const stored = await row(coordinator.recordKey(request.operation, '', request.key));
    expect(stored.status).toBe('completed');
    expect(stored.result).toMatch(/^enc2:k1:/);
    expect(JSON.stringify(stored)).not.toContain(BODY_MARKER);
    expect(JSON.stringify(stored)).not.toContain(HEADER_MARKER);
    expect(await coordinator.run(request, charge)).toEqual({ value: first.value, replayed: true, waited: false });
    expect(await ledgerRows(request.key)).toBe(1);
  });

  test("the same record's earlier answer, completed in its transaction for another body, put back is unreadable", async () => {
    const charge = (request: RunRequest) => async (execution: Execution) => {
      await postgresTransaction(execution).query(`INSERT INTO "${db.schema}".ledger (order_id) VALUES ($1)`, [request.key]);
      return answerTo(request);
    };
    const { second, recordKey, earlier } = await reuseKeyForAnotherBody(records(), transactional(), (request) =>
      transactional().run(request, charge(request)),
    );
    expect(await ledgerRows(second.key)).toBe(2); // one charge per body
    expect(await transactional().run(second, charge(second))).toEqual({ value: answerTo(second), replayed: true, waited: false });

    await records().writeResult(recordKey, earlier);
    expect(isIdempotencyError(await failure(transactional().run(second, charge(second))), StoredAnswerUnreadableError)).toBe(true);
    expect(await ledgerRows(second.key)).toBe(2);
  });
});
