import { RedisStore, redisRecordKey } from '@idempotency-chain/idempotency/redis';
import type { Redis } from 'ioredis';
import { createHash, randomUUID } from 'node:crypto';
import { startRedisServer, type PrivateRedisServer } from './processes';
import { connect } from './redis-tools';
import type { SectionResult } from './report';
import { SETTINGS } from './settings';
import { figure, fmt, sleep } from './stats';
import { checkoutCoordinator, completeOne, DAY_MS, STORED_ANSWER, STORED_ANSWER_BYTES } from './stored-records';
import { rate } from './store-cycles';

/**
 * Live completed records in the loaded store: over a million, and past
 * 2^20 = 1,048,576, where Redis doubles its keyspace table. The doubling
 * happens while loading and is waited out (see `settle`): the runs add
 * some 100k records, which from exactly a million would cross it mid-run.
 */
const LIVE = SETTINGS.quick ? 100_000 : 1_100_000;
/** The concurrency of the store case's headline figure. */
const CONCURRENCY = 16;
const LEASE_MS = 10_000;
/** Records per call of the loading script (each call holds the server for some 10 ms). */
const BATCH = 10_000;
/** Interleaved rounds: the machine is shared, so many short runs beat a few long ones. */
const ROUNDS = SETTINGS.quick ? 2 : 8;
const RUN_S = SETTINGS.quick ? 0.5 : 1;

const hex = (text: string) => createHash('sha256').update(text).digest('hex');

interface Side {
  name: string;
  server: PrivateRedisServer;
  client: Redis;
  store: RedisStore;
}

/**
 * (9) First executions with a million live records in the store against an
 * empty one: the same claim+complete cycle on two private redis-servers,
 * one loaded, one empty, in interleaved runs.
 */
export async function liveRecords(log: (line: string) => void): Promise<SectionResult> {
  const sides: Side[] = [];
  try {
    for (const name of ['empty', 'loaded']) {
      // DEBUG HTSTATS, from this process only (loopback), tells when a table is rehashing.
      const server = await startRedisServer(`live-records-${name}`, ['--enable-debug-command', 'local']);
      const client = await connect(server.url);
      sides.push({ name, server, client, store: new RedisStore({ client }) });
    }
    const [empty, loaded] = sides as [Side, Side];
    const loadStarted = performance.now();
    await load(loaded);
    const loadS = (performance.now() - loadStarted) / 1000;
    const live = await loaded.client.dbsize();
    const memory = Number(/used_memory:(\d+)/.exec(await loaded.client.info('memory'))?.[1]);
    log(`  loaded ${fmt.int(live)} records in ${loadS.toFixed(1)} s (${fmt.mb(memory)} used_memory)`);

    const run = (side: Side) => {
      const process = randomUUID();
      let n = 0;
      return async () => {
        const i = (n++).toString(36);
        const recordKey = hex(`${process}:${i}`);
        const owner = `${process}.${i}`;
        const claim = await side.store.claim({ recordKey, fingerprint: hex(owner), owner, leaseMs: LEASE_MS });
        if (claim.status !== 'claimed') throw new Error(`a fresh key was not claimed: ${claim.status}`);
        if (!(await side.store.complete(recordKey, owner, STORED_ANSWER, DAY_MS))) throw new Error('a completion was refused');
      };
    };
    const cycles = new Map(sides.map((side) => [side, run(side)]));
    for (const side of sides) await rate(cycles.get(side)!, CONCURRENCY, 0.3); // warm-up: scripts loaded, JIT
    // While Redis still moves the loaded keyspace into its doubled table, each command also moves a bucket of it.
    const rehashing = await isRehashing(loaded.client);
    const during = rehashing
      ? [await rate(cycles.get(loaded)!, CONCURRENCY, RUN_S), await rate(cycles.get(empty)!, CONCURRENCY, RUN_S)]
      : undefined;
    if (during) log(`  while rehashing: loaded ${fmt.int(during[0]!)} cycles/s, empty ${fmt.int(during[1]!)} cycles/s`);
    const settleStarted = performance.now();
    await settle(loaded.client);
    const settleS = (performance.now() - settleStarted) / 1000;
    log(`  rehashing over after ${settleS.toFixed(1)} s more`);
    const rates = new Map<Side, number[]>(sides.map((side) => [side, []]));
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) {
        const measured = await rate(cycles.get(side)!, CONCURRENCY, RUN_S);
        rates.get(side)!.push(measured);
        log(`  run ${round + 1}/${ROUNDS} ${side.name.padEnd(6)} ${fmt.int(measured)} cycles/s`);
      }
    }
    const [withNone, withLive] = [rates.get(empty)!, rates.get(loaded)!];
    const ratio = figure(withLive.map((r, i) => r / withNone[i]!));
    return {
      id: 'live-records',
      headline: `**With ${fmt.int(LIVE)} live records**, first executions run at ${fmt.ratio(ratio.median)} of their throughput on an empty store.`,
      title: `9. First executions with ${fmt.int(LIVE)} live records against an empty store`,
      method:
        `Two private \`redis-server\`s started for this section, one loaded with ${fmt.int(LIVE)} completed records (24 h TTL), one empty; ` +
        `on each a \`RedisStore\` on one ioredis connection, and ${CONCURRENCY} concurrent loops (the store case's headline concurrency) of claim (a fresh key) + complete ` +
        `(the ${STORED_ANSWER_BYTES}-byte answer of section 8), ${RUN_S} s per run, ${ROUNDS} rounds alternating which store goes first; the ratio is run by run, then its median. ` +
        `The records are loaded by a Lua script run on the loaded server (\`SET <key> <value> PX <24 h>\` in a loop, ${fmt.int(BATCH)} records per call): the value is copied byte for byte ` +
        'from a record the store wrote through the coordinator, under the keys the store names records by (`redisRecordKey`: `idem:{<the record key in base64url>}`); a claim of one loaded key is checked to replay the answer.',
      tables: [
        {
          headers: ['store', 'records before the runs', 'cycles/s', 'vs empty'],
          rows: [
            ['empty', '0', fmt.spread(figure(withNone), fmt.int), '1.00x'],
            [`${fmt.int(LIVE)} live records`, fmt.int(live), fmt.spread(figure(withLive), fmt.int), fmt.ratio(ratio.median)],
            ...(during
              ? [
                  [
                    `${fmt.int(LIVE)} live records, while Redis rehashed them (one run)`,
                    fmt.int(live),
                    fmt.int(during[0]!),
                    fmt.ratio(during[0]! / during[1]!),
                  ],
                ]
              : []),
          ],
        },
      ],
      targets: [
        {
          what: `first-execution throughput with ${fmt.int(LIVE)} live records >= 0.95x of an empty store`,
          met: ratio.median >= 0.95,
          detail: `${fmt.ratio(ratio.median)} (runs: ${ratio.runs.map(fmt.ratio).join(', ')})`,
        },
      ],
      notes: [
        `Loading took ${loadS.toFixed(1)} s; the loaded server held ${fmt.mb(memory)} of used_memory. Each run adds its own records to both stores, so they grow alike.`,
        'A claim reads one key and writes one; Redis finds a key by hash in constant time, so the records around it should not show, except through a slower cache as the keyspace outgrows it. ' +
          'What does show is the doubling of the keyspace and expiry tables when the key count passes a power of two: until every key has moved to the new table (by a little on every command, ' +
          `and a millisecond in every 100 ms of idle time), each command also moves one bucket of keys. After the load a \`PTTL\` of every loaded key (a Lua loop) finished it, in ${settleS.toFixed(1)} s; ` +
          "the runs start once `DEBUG HTSTATS` shows no table rehashing. Over a store's life the moving costs one key moved per key added, whatever the size; a store that holds a steady count (as many records expire as are written) does not double at all.",
      ],
      profiles: [],
      charts: [],
    };
  } finally {
    for (const side of sides) {
      await side.store.close();
      await side.client.quit().catch(() => undefined);
      await side.server.stop();
    }
  }
}

/**
 * Writes the value `ARGV[1]` with a TTL of `ARGV[2]` ms under each key of
 * `ARGV[3]..`: keys a script does not declare, on a standalone server of
 * this section's own, never a Cluster.
 */
const LOAD_SCRIPT = `
for i = 3, #ARGV do redis.call('SET', ARGV[i], ARGV[1], 'PX', ARGV[2]) end
return 1
`;

/** `PTTL` of each key of `ARGV`. */
const TOUCH_SCRIPT = `
for i = 1, #ARGV do redis.call('PTTL', ARGV[i]) end
return 1
`;

/** The record key of loaded record `i`: 64 hex digits, as the coordinator's. */
function loadedKey(i: number): string {
  const id = createHash('sha1').update(`live:${i}`).digest('hex');
  return id + createHash('sha1').update(id).digest('hex').slice(0, 24);
}

/** The Redis keys of loaded records `start` to `end - 1`, as the store names them. */
function loadedRedisKeys(start: number, end: number): string[] {
  return Array.from({ length: end - start }, (_, i) => redisRecordKey(loadedKey(start + i)));
}

/**
 * Fill `side` with `LIVE` completed records: one through the coordinator,
 * then its value under `LIVE - 1` more keys, by `LOAD_SCRIPT` in batches.
 */
async function load(side: Side): Promise<void> {
  const recordKey = await completeOne(checkoutCoordinator(side.store));
  const value = await side.client.getBuffer(redisRecordKey(recordKey));
  if (!value) throw new Error('the record written through the coordinator is missing');
  for (let start = 1; start < LIVE; start += BATCH) {
    await side.client.eval(LOAD_SCRIPT, 0, value, String(DAY_MS), ...loadedRedisKeys(start, Math.min(start + BATCH, LIVE)));
  }
  const replay = await side.store.claim({ recordKey: loadedKey(1), fingerprint: 'x', owner: 'x', leaseMs: LEASE_MS });
  if (replay.status !== 'completed' || replay.result !== STORED_ANSWER) throw new Error(`a loaded record reads as ${replay.status}`);
}

/** Whether the keyspace or expiry table of db 0 is being rehashed into a doubled one. */
async function isRehashing(client: Redis): Promise<boolean> {
  return String(await client.call('DEBUG', 'HTSTATS', '0')).includes('rehashing target');
}

/**
 * Resolve once no table of db 0 is rehashing. Redis moves keys into a
 * doubled table a bucket per command that looks a key up in it, and for a
 * millisecond in every 100 ms of idle time, which for the expiry table of a
 * million keys takes over a minute: so this looks every loaded key's TTL up
 * (`TOUCH_SCRIPT`), as a minute of traffic would.
 */
async function settle(client: Redis): Promise<void> {
  for (let start = 1; (await isRehashing(client)) && start < LIVE; start += BATCH) {
    await client.eval(TOUCH_SCRIPT, 0, ...loadedRedisKeys(start, Math.min(start + BATCH, LIVE)));
  }
  const deadline = Date.now() + 30_000;
  while (await isRehashing(client)) {
    if (Date.now() > deadline) throw new Error('Redis still rehashed its keyspace after 30 s');
    await sleep(100);
  }
}
