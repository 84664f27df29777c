import { Client } from 'pg';
import { RUN_ID } from './redis-tools';
import { sleep } from './stats';

/** The PostgreSQL the `pg` variant's handlers write to. */
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Host and port of `DATABASE_URL`, never its credentials. */
export const pgHost = (): string => new URL(DATABASE_URL).host;

/** A table of this run's own, for the orders the `pg` handlers insert. */
export interface OrdersTable {
  name: string;
  /** Rows inserted so far. */
  rows(): Promise<number>;
  /** Resolve once the rows equal `expected()`, rechecking for a while (inserts still in flight), with the last count. */
  settle(expected: () => Promise<number>): Promise<{ rows: number; expected: number }>;
  drop(): Promise<void>;
}

/** Create this run's orders table (the database is shared: a name of its own, dropped at the end). */
export async function createOrdersTable(): Promise<OrdersTable> {
  const client = new Client({ connectionString: DATABASE_URL });
  await client.connect();
  const name = `bench_orders_${RUN_ID}`;
  try {
    await client.query(
      `CREATE TABLE ${name} (id bigserial PRIMARY KEY, order_id text NOT NULL, amount_cents integer NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
    );
  } catch (error) {
    await client.end();
    throw error;
  }
  const rows = async () => Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${name}`)).rows[0]?.n ?? 0);
  return {
    name,
    rows,
    async settle(expected) {
      let last = { rows: 0, expected: 0 };
      for (let attempt = 0; attempt < 50; attempt++) {
        last = { rows: await rows(), expected: await expected() };
        if (last.rows === last.expected) break;
        await sleep(100);
      }
      return last;
    },
    async drop() {
      try {
        await client.query(`DROP TABLE IF EXISTS ${name}`);
      } finally {
        await client.end();
      }
    },
  };
}
