import { PostgresStore } from '../src/postgres';
import { describeStoreConformance } from './store-conformance';
import { createTestSchema, type TestSchema } from './support/postgres';

/**
 * The whole conformance suite against PostgreSQL (`DATABASE_URL`), in a
 * schema of this run's own. Outage cases reach the server through a TCP
 * proxy and stop the proxy: open connections are reset and new ones refused,
 * as when the server dies, while the shared server keeps serving the rest.
 */
/** Longer than the suite's 5 s safety bound: only NOTIFY wakes a waiter in time. */
const POLL_INTERVAL_MS = 10_000;

let database: Promise<TestSchema> | undefined;

afterAll(async () => {
  await (await database)?.drop();
});

describeStoreConformance(
  'PostgresStore',
  async ({ outage }) => {
    database ??= createTestSchema('idem_conformance');
    const { schema, pool, proxiedPool } = await database;
    if (outage) {
      const proxied = await proxiedPool();
      const store = new PostgresStore({ pool: proxied.pool, schema, pollIntervalMs: POLL_INTERVAL_MS, ownsPool: true });
      return {
        store,
        outage: { stop: () => proxied.stop() },
        teardown: async () => {
          await proxied.stop();
          await store.close();
        },
      };
    }
    const store = new PostgresStore({ pool, schema, pollIntervalMs: POLL_INTERVAL_MS });
    return { store, teardown: () => store.close() };
  },
  { outage: true },
);
