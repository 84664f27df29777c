import { createTestSchema, type TestSchema } from '../../test/support/postgres';
import { describeOperatorRecords } from '../operator-records.test-support';
import { PostgresStore } from './postgres-store';

let db: TestSchema;
let store: PostgresStore;

beforeAll(async () => {
  db = await createTestSchema('idem_operator');
  // Polls too seldom to matter: only a release's NOTIFY wakes a waiter in time.
  store = new PostgresStore({ pool: db.pool, schema: db.schema, pollIntervalMs: 60_000, sweepIntervalMs: 0 });
});

afterAll(async () => {
  await store.close();
  await db.drop();
});

describeOperatorRecords('PostgreSQL', () => store);
