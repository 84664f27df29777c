import { Idempotency } from '@node-idempotency/core';
import { RedisStorageAdapter } from '@node-idempotency/storage-adapter-redis';
import { createPostgresPool, migrate, PostgresStore } from '@idempotency-chain/idempotency/postgres';
import { RedisStore, redisRecordKey } from '@idempotency-chain/idempotency/redis';
import type { Redis } from 'ioredis';
import { createHash, randomUUID } from 'node:crypto';
import { versionOf } from './environment';
import { DATABASE_URL } from './pg-tools';
import { startRedisServer } from './processes';
import { connect, info, RUN_ID } from './redis-tools';
import type { SectionResult } from './report';
import { SETTINGS } from './settings';
import { fmt } from './stats';
import {
  ANSWER_BODY,
  ANSWER_BODY_BYTES,
  checkoutCoordinator,
  completeOne,
  DAY_MS,
  repeat,
  REQUEST_BODY,
  STORED_ANSWER,
  STORED_ANSWER_BYTES,
} from './stored-records';

/** Completed records written per library. */
const RECORDS = SETTINGS.quick ? 10_000 : 100_000;
/** Records whose `MEMORY USAGE` is averaged. */
const SAMPLE = 1000;
const CONCURRENCY = 64;
/** The goal: a record costs Redis at most its answer and this many bytes. */
const OVERHEAD_TARGET = 150;
/** The answer sizes swept, one record each: the goal at one size says little, allocations come in size classes. */
const SWEEP = { from: 150, to: 1000 };

/** MEMORY USAGE minus the answer's bytes, over the swept answer sizes. */
interface Spread {
  sizes: number;
  within: number;
  mean: number;
  min: number;
  max: number;
}

interface RedisBytes {
  /** Average `MEMORY USAGE <key> SAMPLES 0` over `SAMPLE` records. */
  memoryUsage: number;
  /** `used_memory` after minus before, over the records written. */
  usedMemory: number;
  keyLength: number;
  valueLength: number;
}

/**
 * (8) What a completed record costs the store, in bytes: Redis (ours and
 * @node-idempotency's, each on a private redis-server, so `used_memory`
 * counts nothing else) and PostgreSQL (ours; the peer has no PostgreSQL
 * storage).
 */
export async function recordBytes(log: (line: string) => void): Promise<SectionResult> {
  const server = await startRedisServer('record-bytes');
  let client: Redis | undefined;
  let ours: RedisBytes;
  let peer: RedisBytes;
  let bare: RedisBytes;
  let spread: { ours: Spread; peer: Spread };
  try {
    client = await connect(server.url);
    const admin = client;
    const store = new RedisStore({ client: admin });
    const coordinator = checkoutCoordinator(store);
    ours = await redisBytes(admin, 'idem:*', () => repeat(RECORDS, CONCURRENCY, () => completeOne(coordinator)));
    const oursOver: number[] = [];
    for (let size = SWEEP.from; size <= SWEEP.to; size += 1) {
      const recordKey = await completeOne(coordinator, randomUUID(), 'x'.repeat(size));
      oursOver.push(Number(await admin.call('MEMORY', 'USAGE', redisRecordKey(recordKey), 'SAMPLES', '0')) - size);
    }
    await admin.call('FLUSHALL');
    await store.close();
    log(`  ours: ${fmt.int(ours.memoryUsage)} B MEMORY USAGE, ${fmt.int(ours.usedMemory)} B used_memory per record`);

    const storage = new RedisStorageAdapter({ url: server.url });
    await storage.connect();
    try {
      const idempotency = new Idempotency(storage, { cacheTTLMS: DAY_MS });
      peer = await redisBytes(admin, 'node-idempotency:*', () =>
        repeat(RECORDS, CONCURRENCY, async () => {
          const request = { headers: { 'idempotency-key': randomUUID() }, body: REQUEST_BODY, path: '/orders', method: 'POST' };
          if ((await idempotency.onRequest(request)) !== undefined) throw new Error('a fresh key was replayed');
          // What its NestJS interceptor stores for a 201 with this body (`additional` holds the status).
          await idempotency.onResponse(request, { additional: { statusCode: 201 }, body: ANSWER_BODY });
        }),
      );
      const peerOver: number[] = [];
      for (let size = SWEEP.from; size <= SWEEP.to; size += 1) {
        const key = randomUUID();
        const request = { headers: { 'idempotency-key': key }, body: REQUEST_BODY, path: '/orders', method: 'POST' };
        await idempotency.onRequest(request);
        await idempotency.onResponse(request, { additional: { statusCode: 201 }, body: 'x'.repeat(size) });
        const usage = await admin.call('MEMORY', 'USAGE', `node-idempotency:POST:/orders:${key}`, 'SAMPLES', '0');
        if (usage === null) throw new Error("@node-idempotency's record was not found under its key");
        peerOver.push(Number(usage) - size);
      }
      await admin.call('FLUSHALL');
      spread = { ours: spreadOf(oursOver), peer: spreadOf(peerOver) };
    } finally {
      await storage.disconnect();
    }
    log(`  @node-idempotency: ${fmt.int(peer.memoryUsage)} B MEMORY USAGE, ${fmt.int(peer.usedMemory)} B used_memory per record`);
    // The floor: the answer alone under a short key, with the same TTL, as no library could store it for less.
    bare = await redisBytes(admin, 'a:*', async () => {
      for (let from = 0; from < RECORDS; from += 1000) {
        const batch = admin.pipeline();
        for (let i = from; i < Math.min(from + 1000, RECORDS); i += 1) batch.set(`a:${i}`, STORED_ANSWER, 'PX', DAY_MS);
        await batch.exec();
      }
    });
    log(`  the answer alone: ${fmt.int(bare.memoryUsage)} B MEMORY USAGE, ${fmt.int(bare.usedMemory)} B used_memory per key`);
  } finally {
    await client?.quit();
    await server.stop();
  }
  const pg = await postgresBytes();
  log(`  PostgreSQL: ${fmt.int(pg.total)} B per row (${fmt.int(pg.heap)} heap, ${fmt.int(pg.indexes)} indexes)`);

  const limit = STORED_ANSWER_BYTES + OVERHEAD_TARGET;
  const usedLimit = bare.usedMemory + OVERHEAD_TARGET;
  const redisRow = (name: string, r: RedisBytes, answer: number) => [
    name,
    `${fmt.int(r.memoryUsage)} B`,
    `${fmt.int(r.usedMemory)} B`,
    `${fmt.int(r.memoryUsage - answer)} B`,
    `${r.keyLength} + ${r.valueLength} B`,
  ];
  const peerVersion = versionOf('@node-idempotency/core');
  return {
    id: 'record-bytes',
    headline:
      `**Bytes per record**: a completed record with a ${ANSWER_BODY_BYTES}-byte body costs Redis ${fmt.int(ours.memoryUsage)} B (MEMORY USAGE; ` +
      `${fmt.int(ours.usedMemory)} B of used_memory) against ${fmt.int(peer.memoryUsage)} B (${fmt.int(peer.usedMemory)} B) for @node-idempotency's record of the same answer, ` +
      `and PostgreSQL ${fmt.int(pg.total)} B per row with its indexes; over answers of ${SWEEP.from} to ${fmt.int(SWEEP.to)} B, ours costs ${fmt.int(spread.ours.mean)} B more than the answer on average ` +
      `(${fmt.int(spread.peer.mean)} B for @node-idempotency), within +${OVERHEAD_TARGET} B at ${spread.ours.within} of ${spread.ours.sizes} sizes.`,
    title: `8. Bytes per record: a completed record in Redis and PostgreSQL, vs @node-idempotency ${peerVersion}`,
    method:
      `${fmt.int(RECORDS)} completed records per library, each for a fresh key, with a ${ANSWER_BODY_BYTES}-byte JSON body, ${CONCURRENCY} concurrent writers. ` +
      `Redis: a private \`redis-server\` started for this section (no other keys, so its \`used_memory\` is this section's alone), stopped at its end. ` +
      `Ours are written through \`IdempotencyCoordinator.begin()\` and \`Execution.complete()\` on a \`RedisStore\` (the real record key, fingerprint and owner token), ` +
      `storing the answer as the NestJS integration does (status and headers, then the body: ${STORED_ANSWER_BYTES} bytes). ` +
      `@node-idempotency's through its core \`Idempotency\` class (\`onRequest\`, then \`onResponse\` with the \`{ additional: { statusCode }, body }\` its NestJS interceptor passes) ` +
      `on its \`RedisStorageAdapter\`, with its default key prefix and the same ${fmt.int(DAY_MS / 3_600_000)} h TTL. ` +
      `MEMORY USAGE (\`SAMPLES 0\`) is averaged over ${SAMPLE} records found by SCAN; used_memory is read before and after the writes and divided by the record count ` +
      `(it includes what Redis spends around the key: its entries in the keyspace and expiry tables). ` +
      `PostgreSQL: \`idempotency_records\` in a schema of this run's own, migrated by \`migrate()\`; one record is written through \`PostgresStore\`, ` +
      `and its row copied under ${fmt.int(RECORDS - 1)} more record keys (\`INSERT ... SELECT\`, the same bytes in every column but the key); ` +
      '`pg_total_relation_size` (heap, TOAST and both indexes) after `VACUUM ANALYZE`, divided by the row count; the schema is dropped at the end.',
    tables: [
      {
        headers: ['Redis record', 'MEMORY USAGE / record', 'used_memory / record', 'MEMORY USAGE - answer', 'key + value length'],
        rows: [
          redisRow(`ours (answer ${STORED_ANSWER_BYTES} B stored)`, ours, STORED_ANSWER_BYTES),
          redisRow(`@node-idempotency (body ${ANSWER_BODY_BYTES} B stored)`, peer, ANSWER_BODY_BYTES),
          redisRow(`the answer alone (\`SET a:<n> <${STORED_ANSWER_BYTES} B> PX\`, the same TTL)`, bare, STORED_ANSWER_BYTES),
          [
            'ours / @node-idempotency',
            fmt.ratio(ours.memoryUsage / peer.memoryUsage),
            fmt.ratio(ours.usedMemory / peer.usedMemory),
            '',
            '',
          ],
        ],
      },
      {
        headers: [
          `MEMORY USAGE - answer, one record per answer size from ${SWEEP.from} to ${fmt.int(SWEEP.to)} B`,
          `sizes within +${OVERHEAD_TARGET} B`,
          'mean',
          'least',
          'most',
        ],
        rows: [
          [
            'ours (the answer as given)',
            `${spread.ours.within} of ${spread.ours.sizes}`,
            ...[spread.ours.mean, spread.ours.min, spread.ours.max].map((b) => `${fmt.int(b)} B`),
          ],
          [
            '@node-idempotency (the body as given)',
            `${spread.peer.within} of ${spread.peer.sizes}`,
            ...[spread.peer.mean, spread.peer.min, spread.peer.max].map((b) => `${fmt.int(b)} B`),
          ],
        ],
      },
      {
        headers: ['PostgreSQL', 'rows', 'total / row', 'heap / row', 'indexes / row', 'TOAST / row'],
        rows: [
          [
            'ours (`idempotency_records`)',
            fmt.int(pg.rows),
            `${fmt.int(pg.total)} B`,
            `${fmt.int(pg.heap)} B`,
            `${fmt.int(pg.indexes)} B`,
            `${fmt.int(pg.toast)} B`,
          ],
          ['@node-idempotency', 'n/a', 'n/a', 'n/a', 'n/a', 'n/a'],
        ],
      },
    ],
    targets: [
      {
        what: `Redis MEMORY USAGE per completed record <= answer + ${OVERHEAD_TARGET} B (${limit} B)`,
        met: ours.memoryUsage <= limit,
        detail: `${fmt.int(ours.memoryUsage)} B for a ${STORED_ANSWER_BYTES}-byte stored answer (${ANSWER_BODY_BYTES}-byte body)`,
      },
      {
        what: `Redis MEMORY USAGE per completed record <= answer + ${OVERHEAD_TARGET} B at every answer size from ${SWEEP.from} to ${fmt.int(SWEEP.to)} B`,
        met: spread.ours.within === spread.ours.sizes,
        detail: `${spread.ours.within} of ${spread.ours.sizes} sizes; ${fmt.int(spread.ours.mean)} B over the answer on average, ${fmt.int(spread.ours.max)} B at most (@node-idempotency: ${fmt.int(spread.peer.mean)} B, ${fmt.int(spread.peer.max)} B)`,
      },
      {
        what: `Redis used_memory per completed record <= the answer alone's + ${OVERHEAD_TARGET} B (${fmt.int(usedLimit)} B)`,
        met: ours.usedMemory <= usedLimit,
        detail: `${fmt.int(ours.usedMemory)} B against ${fmt.int(bare.usedMemory)} B for the answer alone under a short key with the same TTL (+${fmt.int(ours.usedMemory - bare.usedMemory)} B)`,
      },
    ],
    notes: [
      `"Answer" is what the store is given: the ${ANSWER_BODY_BYTES}-byte body with its status and \`content-type\` (${STORED_ANSWER_BYTES} bytes). ` +
        `Our record adds its key (\`idem:{<SHA-256 of the identity, base64url>}\`, ${ours.keyLength} bytes) and, before the answer in the same string, ` +
        `a header of ${ours.valueLength - STORED_ANSWER_BYTES} bytes: the format version line, the state, the first 128 bits of SHA-256 of the request's fingerprint, ` +
        "64 bits of a hash of the owner token and the epoch in 6 bytes (see `scripts.ts`); Redis rounds each allocation up to its allocator's size class " +
        '(jemalloc: ... 48, 64, 80, ... 256, 320, 384, 448 bytes).',
      "used_memory adds to MEMORY USAGE what Redis spends on any key with a TTL, whatever its value: its entry in the expiry table and its share of both tables' bucket arrays. " +
        "No record can cost less than the answer alone does, so the used_memory goal is set against that floor, measured on the same server in the same run; the MEMORY USAGE goal is against the answer's bytes.",
      `@node-idempotency stores the body inside a JSON document with its status, a BLAKE2s fingerprint of the request body and the HTTP status, under \`node-idempotency:POST:/orders:<key>\`; ` +
        'its NestJS interceptor stores `content-type` only when the handler set it before returning, which a plain Nest handler does not, so it is left out here, and no owner or epoch (it has no fencing).',
      '@node-idempotency has no PostgreSQL storage (its adapters are memory and Redis), so there is no PostgreSQL figure to set ours against.',
      `The sweep writes one record per answer size through the same coordinator (and one @node-idempotency record per body size) and reads its MEMORY USAGE: ` +
        'what a record costs over its answer jumps with the allocator size class its value falls into (64 bytes apart up to 512 B, 128 up to 1 KiB, 256 above), ' +
        'so the goal met at one answer size is not met at every size.',
      'One run per figure: bytes do not move with the load on the machine.',
    ],
    profiles: [],
    charts: [],
  };
}

function spreadOf(over: number[]): Spread {
  return {
    sizes: over.length,
    within: over.filter((bytes) => bytes <= OVERHEAD_TARGET).length,
    mean: over.reduce((sum, bytes) => sum + bytes, 0) / over.length,
    min: Math.min(...over),
    max: Math.max(...over),
  };
}

/** Write records with `write`, then measure what the keys matching `pattern` cost. */
async function redisBytes(client: Redis, pattern: string, write: () => Promise<void>): Promise<RedisBytes> {
  const usedMemory = async () => Number((await info(client, 'memory')).get('used_memory'));
  const before = await usedMemory();
  await write();
  const after = await usedMemory();
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0' && keys.length < SAMPLE);
  const sample = keys.slice(0, SAMPLE);
  let total = 0;
  for (const key of sample) total += Number(await client.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
  const first = sample[0] as string;
  const valueLength = await client.strlen(first);
  const found = await client.dbsize();
  await client.call('FLUSHALL'); // this section's own server: the next library starts from empty
  if (found !== RECORDS) throw new Error(`expected ${RECORDS} keys, found ${found}`);
  return { memoryUsage: total / sample.length, usedMemory: (after - before) / RECORDS, keyLength: Buffer.byteLength(first), valueLength };
}

interface PostgresBytes {
  rows: number;
  total: number;
  heap: number;
  indexes: number;
  toast: number;
}

async function postgresBytes(): Promise<PostgresBytes> {
  const schema = `bench_bytes_${RUN_ID}`;
  const pool = createPostgresPool(DATABASE_URL, { max: 2 });
  try {
    await migrate(pool, { schema });
    const store = new PostgresStore({ pool, schema, sweepIntervalMs: 0 });
    const table = `"${schema}".idempotency_records`;
    try {
      const recordKey = await completeOne(checkoutCoordinator(store));
      await pool.query(
        `INSERT INTO ${table} (store_key, status, fingerprint, owner, epoch, result, expires_at, format)
         SELECT encode(sha256(('${RUN_ID}' || i)::bytea), 'hex'), r.status, r.fingerprint, r.owner, r.epoch, r.result, r.expires_at, r.format
           FROM ${table} r, generate_series(2, $2::int) AS i WHERE r.store_key = $1`,
        [recordKey, RECORDS],
      );
      // A copied row is a record the store reads as its own: a claim of it replays the answer.
      const copied = createHash('sha256').update(`${RUN_ID}2`).digest('hex');
      const replay = await store.claim({ recordKey: copied, fingerprint: 'x', owner: 'x', leaseMs: 10_000 });
      if (replay.status !== 'completed' || replay.result !== STORED_ANSWER) throw new Error(`a copied row reads as ${replay.status}`);
    } finally {
      await store.close();
    }
    await pool.query(`VACUUM ANALYZE ${table}`);
    const { rows } = await pool.query<{ rows: string; total: string; heap: string; indexes: string; toast: string }>(
      `SELECT (SELECT count(*) FROM ${table}) AS rows, pg_total_relation_size($1) AS total, pg_relation_size($1) AS heap,
              pg_indexes_size($1) AS indexes,
              coalesce((SELECT pg_total_relation_size(reltoastrelid) FROM pg_class WHERE oid = $1::regclass AND reltoastrelid <> 0), 0) AS toast`,
      [table],
    );
    const row = rows[0]!;
    const count = Number(row.rows);
    if (count !== RECORDS) throw new Error(`expected ${RECORDS} rows, found ${count}`);
    return {
      rows: count,
      total: Number(row.total) / count,
      heap: Number(row.heap) / count,
      indexes: Number(row.indexes) / count,
      toast: Number(row.toast) / count,
    };
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await pool.end();
  }
}
