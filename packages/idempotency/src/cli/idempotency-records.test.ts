/**
 * The `idempotency-records` bin end to end: the built file the package
 * ships (`dist/cli/idempotency-records.js`, what `npx idempotency-records`
 * runs), as a child process, against real Redis, a real Redis Cluster and
 * PostgreSQL, and against servers that refuse or never answer.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { connect as netConnect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Cluster } from 'ioredis';
import { connectCluster, clusterNodes, deleteClusterKeys } from '../../test/support/redis-cluster';
import { createTestSchema, DATABASE_URL, type TestSchema } from '../../test/support/postgres';
import { IdempotencyCoordinator, type RunRequest } from '../coordinator';
import { isIdempotencyError, LeaseLostError } from '../errors';
import { PostgresStore } from '../postgres';
import { RedisStore, redisRecordKey } from '../redis';
import { connect, deleteKeys, REDIS_URL, sharedRedisStore, waitUntil } from '../redis/redis.test-support';
import { claimSilent } from '../holder-liveness.test-support';
import { hashKey } from '../key-hash';
import { inspectRecord } from '../operator-records';
import { latch } from '../testing/async';
import { operatorReleaseScript } from '../redis/scripts';
import type { IdempotencyStore, InspectableStore } from '../store';

const CLI = join(__dirname, '..', '..', 'dist', 'cli', 'idempotency-records.js');
const OPERATION = 'payments.charge';
const SCOPE = 'tenant:acme';
const ANSWER = { statusCode: 201, body: { chargeId: 'ch_cli', amountCents: 700 } };
const ENCRYPTION_KEYS = `ops1:${randomBytes(32).toString('base64')}`;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The one JSON line of stderr. */
  audit: Record<string, unknown>;
  /** Every line of stderr that is not the audit line. */
  messages: string[];
}

/** The secret the services hash keys with, shared with the CLI so that its audit line's hashes can be checked here. */
const SECRET = randomBytes(16).toString('hex');
const keyed = (value: string) => hashKey(value, SECRET);

/** Run the CLI; `input` is its stdin (none by default). */
async function cli(args: string[], env: Record<string, string> = {}, input = ''): Promise<Run> {
  const child = spawn(process.execPath, [CLI, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', IDEMPOTENCY_KEY_HASH_SECRET: SECRET, ...env },
  });
  child.stdin.end(input);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  const lines = stderr.split('\n').filter((line) => line !== '');
  const audits = lines.filter((line) => line.startsWith('{'));
  expect(audits).toHaveLength(1); // exactly one audit line, whatever happened
  return {
    code,
    stdout,
    stderr,
    audit: JSON.parse(audits[0] as string) as Record<string, unknown>,
    messages: lines.filter((line) => !line.startsWith('{')),
  };
}

const request = (): RunRequest => ({ operation: OPERATION, key: `order-${randomUUID()}`, scope: SCOPE, fingerprint: 'fp-cli' });
const named = (req: RunRequest, service: string) => ['--service', service, '--operation', OPERATION, '--scope', SCOPE, '--key', req.key];
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

beforeAll(() => {
  if (!existsSync(CLI))
    throw new Error(`${CLI} is missing: build the package first (npx turbo run build --filter=@idempotency-chain/idempotency)`);
});

/**
 * The cases every store answers alike; `storeArgs` name the store the way an operator would, `redisPrefix` the
 * prefix of a Redis store's keys (none for PostgreSQL).
 */
function describeCli(
  name: string,
  setup: () => { store: IdempotencyStore; storeArgs: string[]; service: string; redisPrefix?: string },
): void {
  describe(`idempotency-records on ${name}`, () => {
    const coordinator = (encrypted = false) => {
      const { store, service } = setup();
      return new IdempotencyCoordinator({
        service,
        store,
        replayCache: false,
        defaults: { leaseMs: 60_000, retentionMs: 3_600_000 },
        ...(encrypted && { encryption: { keys: [{ id: 'ops1', key: ENCRYPTION_KEYS.slice('ops1:'.length) }] } }),
      });
    };

    test('inspect a completed record by its key: human output, exit 0, one audit line naming the record, never the key', async () => {
      const req = request();
      const ran = await coordinator().run(req, async () => ANSWER);
      const recordKey = coordinator().recordKey(OPERATION, SCOPE, req.key);
      const run = await cli(['inspect', ...setup().storeArgs, ...named(req, setup().service)]);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`record       ${recordKey}`);
      expect(run.stdout).toContain('status       completed');
      expect(run.stdout).toContain(`epoch        ${ran.epoch}`);
      // The fingerprint as the record keeps it (Redis: its first 128 bits), and where Redis keeps the record.
      expect(run.stdout).toContain(`fingerprint  ${setup().store.keptFingerprint?.('fp-cli') ?? 'fp-cli'}\n`);
      const { redisPrefix } = setup();
      if (redisPrefix === undefined) expect(run.stdout).not.toContain('redis key');
      else expect(run.stdout).toContain(`redis key    ${redisRecordKey(recordKey, redisPrefix)}\n`);
      expect(run.stdout).toContain(`answer       clear, ${Buffer.byteLength(JSON.stringify(ANSWER))} bytes`);
      expect(run.stdout).not.toContain('ch_cli'); // no body unless asked
      expect(run.audit).toMatchObject({
        action: 'inspect',
        recordRef: keyed(recordKey),
        service: setup().service,
        operation: OPERATION,
        keyHash: keyed(req.key),
        outcome: 'completed',
        epochBefore: ran.epoch,
      });
      expect(run.stderr).not.toContain(recordKey); // an unkeyed hash of the key: never in the audit trail
      expect(typeof run.audit.time).toBe('string');
      expect(typeof run.audit.user).toBe('string');
      expect(run.stdout + run.stderr).not.toContain(req.key);
    });

    test('inspect --json --body by record key, and an absent record exits 1', async () => {
      const req = request();
      await coordinator().run(req, async () => ANSWER);
      const recordKey = coordinator().recordKey(OPERATION, SCOPE, req.key);
      const run = await cli(['inspect', ...setup().storeArgs, '--record', recordKey, '--json', '--body']);
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({
        recordKey,
        status: 'completed',
        answer: { status: 'clear', body: JSON.stringify(ANSWER) },
      });
      expect(run.stderr).not.toContain('ch_cli'); // the body never reaches the audit line

      const absent = await cli(['inspect', ...setup().storeArgs, ...named(request(), setup().service), '--json']);
      expect(absent.code).toBe(1);
      expect(JSON.parse(absent.stdout)).toMatchObject({ status: 'absent' });
      expect(absent.audit).toMatchObject({ action: 'inspect', outcome: 'absent' });
    });

    test('release an in-progress record whose holder is silent: exit 0, epochs in the audit line; the holder can no longer complete, and a retry executes above the new epoch', async () => {
      const req = request();
      const idempotency = coordinator();
      const recordKey = idempotency.recordKey(OPERATION, SCOPE, req.key);
      const store = setup().store as InspectableStore;
      const epoch = await claimSilent(store, { recordKey, fingerprint: req.fingerprint, owner: 'gone-holder', leaseMs: 60_000 });
      const inspected = await cli(['inspect', ...setup().storeArgs, '--record', recordKey]);
      expect(inspected.stdout).toMatch(
        /renewals {5}holder silent \(its lease not yet expired\), last renewal \d+ ms ago \(heartbeat every 20 ms\)/,
      );
      const run = await cli(['release', ...setup().storeArgs, '--record', recordKey, '--reason', 'INC-7 holder gone']);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`released; epoch ${epoch} -> ${epoch + 1}`);
      expect(run.audit).toMatchObject({
        action: 'release',
        recordRef: keyed(recordKey),
        outcome: 'released',
        epochBefore: epoch,
        epochAfter: epoch + 1,
        reason: 'INC-7 holder gone',
      });
      expect(await store.complete(recordKey, 'gone-holder', JSON.stringify(ANSWER), 60_000)).toBe(false);
      const retry = await idempotency.run(req, async () => ANSWER);
      expect(retry.replayed).toBe(false);
      expect(retry.epoch).toBeGreaterThan(epoch + 1);
    });

    test('issue 35: an operator release while the holder charges and renews its lease is refused (exit 1), so the customer is charged once; --force is what ends it', async () => {
      // The figures: a 3 s lease renewed every 1 s, the operator releasing mid-charge, then the customer's retry.
      const { store, service } = setup();
      const idempotency = new IdempotencyCoordinator({
        service,
        store,
        replayCache: false,
        defaults: { leaseMs: 3_000, heartbeatMs: 1_000, retentionMs: 3_600_000 },
      });
      const req = request();
      const recordKey = idempotency.recordKey(OPERATION, SCOPE, req.key);
      let charges = 0;
      const charging = latch();
      const operatorDone = latch();
      const charge = async () => {
        charging.open();
        await operatorDone.promise; // the charge is still in flight at the payment provider while the operator acts
        charges += 1;
        return ANSWER;
      };
      const holder = failure(idempotency.run(req, charge));
      await charging.promise;
      // Event ordering, not a sleep: wait until the store shows the lease renewed (its lease left jumps back up).
      const first = await inspectRecord(store, { recordKey });
      const firstAt = performance.now();
      await waitUntil(
        async () => {
          const now = await inspectRecord(store, { recordKey });
          return (now.leaseRemainingMs ?? 0) > (first.leaseRemainingMs ?? 0) - (performance.now() - firstAt) + 250;
        },
        30_000,
        'a renewal of the holder’s lease',
      );
      const inspected = await cli(['inspect', ...setup().storeArgs, '--record', recordKey]);
      const released = await cli(['release', ...setup().storeArgs, '--record', recordKey, '--reason', 'INC-35 looks stuck']);
      operatorDone.open();
      const holderError = await holder;
      const retry = await idempotency.run(req, charge);

      expect({ charges, releaseExit: released.code }).toEqual({ charges: 1, releaseExit: 1 });
      expect(holderError).toBeUndefined();
      expect(retry.replayed).toBe(true);
      expect(inspected.stdout).toMatch(/renewals {5}holder alive, last renewal \d+ ms ago \(heartbeat every 1000 ms\)/);
      expect(released.stdout).toContain('refused, its holder is alive');
      expect(released.stdout).toContain('a customer may be charged twice; add --force');
      expect(released.audit).toMatchObject({ action: 'release', outcome: 'refused_holder_alive', reason: 'INC-35 looks stuck' });

      // With --force the operator ends it anyway, and is told what that costs.
      const again = request();
      const live = (await idempotency.begin(again)).execution!;
      const forced = await cli(['release', ...setup().storeArgs, '--record', live.recordKey, '--force']);
      expect(forced.code).toBe(0);
      expect(forced.audit).toMatchObject({ outcome: 'forced_holder_alive', epochBefore: live.epoch, epochAfter: live.epoch + 1 });
      expect(forced.messages).toEqual([expect.stringContaining('a customer may be charged twice')]);
      expect(isIdempotencyError(await failure(live.complete(JSON.stringify(ANSWER))), LeaseLostError)).toBe(true);
    });

    test('release of a completed record: refused with exit 1 and the record kept; --force deletes the answer, exit 0', async () => {
      const req = request();
      const ran = await coordinator().run(req, async () => ANSWER);
      const refused = await cli(['release', ...setup().storeArgs, ...named(req, setup().service)]);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toContain('refused, the record is completed');
      expect(refused.audit).toMatchObject({ outcome: 'refused_completed', epochBefore: ran.epoch });
      expect((await cli(['inspect', ...setup().storeArgs, ...named(req, setup().service)])).code).toBe(0);

      const forced = await cli(['release', ...setup().storeArgs, ...named(req, setup().service), '--force', '--json']);
      expect(forced.code).toBe(0);
      expect(JSON.parse(forced.stdout)).toMatchObject({ outcome: 'forced', epochBefore: ran.epoch, epochAfter: ran.epoch! + 1 });
      expect(forced.audit).toMatchObject({ outcome: 'forced' });
      // What a forced release cannot reach: the answer a service replayed from memory.
      expect(forced.messages).toEqual([expect.stringContaining('replay cache')]);
      expect(forced.messages[0]).toContain('restart the instances');
      expect((await cli(['release', ...setup().storeArgs, ...named(req, setup().service)])).code).toBe(1); // absent now
    });

    test('from a log line to the record: the key read from stdin, checked against the line’s keyHash; another key is refused', async () => {
      const req = request();
      const idempotency = coordinator();
      const execution = (await idempotency.begin(req)).execution!;
      const logged = keyed(req.key); // the keyHash the service's log line carries, under the deployment's secret
      const identity = ['--service', setup().service, '--operation', OPERATION, '--scope', SCOPE];
      const wrong = await cli(['release', ...setup().storeArgs, ...identity, '--key-stdin', '--key-hash', logged], {}, 'order-guess\n');
      expect(wrong.code).toBe(2);
      expect(wrong.messages[0]).toContain('the key does not match --key-hash');
      expect(wrong.audit).toMatchObject({ action: 'release', outcome: 'usage_error' });
      expect((await inspectRecordStatus(req)).status).toBe('in_progress'); // nothing was released

      // The holder is alive (it has just claimed): only --force ends it.
      const run = await cli(
        ['release', ...setup().storeArgs, ...identity, '--key-stdin', '--key-hash', logged, '--reason', 'INC-9', '--force'],
        {},
        `${req.key}\n`,
      );
      expect(run.code).toBe(0);
      expect(run.audit).toMatchObject({
        outcome: 'forced_holder_alive',
        keyHash: logged,
        recordRef: keyed(execution.recordKey),
        epochBefore: execution.epoch,
      });
      expect(run.stderr).not.toContain(req.key);
      expect(run.stderr).not.toContain(execution.recordKey);

      const unkeyed = await cli(
        ['inspect', ...setup().storeArgs, ...identity, '--key-stdin', '--key-hash', logged],
        { IDEMPOTENCY_KEY_HASH_SECRET: '' },
        req.key,
      );
      expect(unkeyed.code).toBe(2);
      expect(unkeyed.messages[0]).toContain('--key-hash needs IDEMPOTENCY_KEY_HASH_SECRET');
    });

    /** The record of `req`, as the CLI reports it. */
    async function inspectRecordStatus(req: RunRequest): Promise<{ status: string }> {
      const run = await cli(['inspect', ...setup().storeArgs, ...named(req, setup().service), '--json']);
      return JSON.parse(run.stdout) as { status: string };
    }

    test('an encrypted answer: size only without the keyring; decrypted with IDEMPOTENCY_ENCRYPTION_KEYS', async () => {
      const req = request();
      await coordinator(true).run(req, async () => ANSWER);
      const without = await cli(['inspect', ...setup().storeArgs, ...named(req, setup().service), '--json', '--body']);
      expect(without.code).toBe(0);
      const sealed = JSON.parse(without.stdout) as { answer: { status: string; storedBytes: number; body?: string } };
      expect(sealed.answer.status).toBe('encrypted');
      expect(sealed.answer.storedBytes).toBeGreaterThan(0);
      expect(sealed.answer.body).toBeUndefined();

      const withKeys = await cli(['inspect', ...setup().storeArgs, ...named(req, setup().service), '--json', '--body'], {
        IDEMPOTENCY_ENCRYPTION_KEYS: ENCRYPTION_KEYS,
      });
      expect(JSON.parse(withKeys.stdout)).toMatchObject({ answer: { status: 'decrypted', body: JSON.stringify(ANSWER) } });
      expect(withKeys.stderr).not.toContain('ch_cli');
    });
  });
}

describe('Redis', () => {
  const redis = sharedRedisStore();
  describeCli('Redis', () => ({
    store: redis.store(),
    storeArgs: ['--store', REDIS_URL, '--prefix', redis.prefix],
    service: 'payments',
    redisPrefix: redis.prefix,
  }));
});

describe('Redis Cluster', () => {
  const prefix = `test-cluster:${randomUUID()}:`;
  let cluster: Cluster;
  let store: RedisStore;
  beforeAll(async () => {
    cluster = await connectCluster();
    store = new RedisStore({ client: cluster, prefix });
  });
  afterAll(async () => {
    await store.close();
    await deleteClusterKeys(cluster, prefix);
    await cluster.quit();
  });
  const nodes = () => clusterNodes().map(({ host, port }) => `${host}:${port}`);
  describeCli('Redis Cluster', () => ({
    store,
    storeArgs: ['--cluster', nodes().join(','), '--prefix', prefix],
    service: 'payments',
    redisPrefix: prefix,
  }));
});

describe('PostgreSQL', () => {
  let db: TestSchema;
  let store: PostgresStore;
  beforeAll(async () => {
    db = await createTestSchema('idem_cli');
    store = new PostgresStore({ pool: db.pool, schema: db.schema, sweepIntervalMs: 0 });
  });
  afterAll(async () => {
    await store.close();
    await db.drop();
  });
  describeCli('PostgreSQL', () => ({ store, storeArgs: ['--store', DATABASE_URL, '--schema', db.schema], service: 'payments' }));
});

describe('idempotency-records failing', () => {
  const record = ['--record', 'f'.repeat(64)];
  /** A port nothing listens on: taken, then let go. */
  async function closedPort(): Promise<number> {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    server.close();
    await once(server, 'close');
    return port;
  }

  test.each([
    ['Redis', (port: number) => `redis://127.0.0.1:${port}`],
    ['PostgreSQL', (port: number) => `postgres://postgres@127.0.0.1:${port}/postgres`],
  ])('a %s that refuses the connection: exit 2, one line saying so, an audit line', async (_name, url) => {
    const port = await closedPort();
    const run = await cli(['inspect', '--store', url(port), ...record]);
    expect(run.code).toBe(2);
    expect(run.messages).toEqual([
      expect.stringMatching(new RegExp(`^idempotency-records: cannot connect to .*127\\.0\\.0\\.1:${port}.*ECONNREFUSED`)),
    ]);
    expect(run.audit).toMatchObject({ action: 'inspect', recordRef: keyed('f'.repeat(64)), outcome: 'connection_error' });
    expect(run.stdout).toBe('');
  });

  describe('a server that accepts connections and never answers', () => {
    let silent: Server;
    const sockets = new Set<Socket>();
    beforeAll(async () => {
      silent = createServer((socket) => {
        sockets.add(socket);
        socket.on('error', () => undefined);
      });
      silent.listen(0, '127.0.0.1');
      await once(silent, 'listening');
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      silent.close();
      await once(silent, 'close');
    });

    test.each([
      ['Redis', (port: number) => `redis://127.0.0.1:${port}`],
      ['PostgreSQL', (port: number) => `postgres://user:secret@127.0.0.1:${port}/postgres`],
    ])('as %s: the run ends with exit 2 at --timeout-ms, saying so in one line that has no credentials', async (_name, url) => {
      const { port } = silent.address() as { port: number };
      const run = await cli(['release', '--store', url(port), ...record, '--timeout-ms', '300', '--reason', 'drill']);
      expect(run.code).toBe(2);
      expect(run.messages).toEqual([
        `idempotency-records: ${url(port).replace('user:secret@', '').replace(/\/$/, '')} did not answer within 300 ms`,
      ]);
      expect(run.audit).toMatchObject({ action: 'release', outcome: 'timeout', reason: 'drill' });
      expect(run.stderr).not.toContain('secret');
    });
  });

  test.each([
    [[], 'no command'],
    [['purge', '--store', 'redis://127.0.0.1:6379', ...record], 'unknown command "purge"'],
    [['inspect', ...record], '--store is required'],
    [['inspect', '--store', 'redis://127.0.0.1:6379'], 'give --record, or --service, --operation and --key'],
    [['inspect', '--store', 'redis://127.0.0.1:6379', '--record', 'not-a-hash'], '--record is the record key the application holds'],
    [['inspect', '--store', 'redis://127.0.0.1:6379', ...record, '--force'], '--force and --reason are for release'],
    [['inspect', '--store', 'mysql://127.0.0.1', ...record], '--store must be redis://, rediss:// or postgres://'],
    [['inspect', '--store', 'redis://127.0.0.1:6379', ...record, '--bogus'], "Unknown option '--bogus'"],
    [['inspect', '--store', 'redis://127.0.0.1:6379/notanumber', ...record], `--store's database is a whole number (got "notanumber")`],
    [['inspect', '--store', 'redis://127.0.0.1:6379/1.5', ...record], `--store's database is a whole number (got "1.5")`],
    [
      ['inspect', '--store', 'redis://127.0.0.1:6379', '--service', 's', '--operation', 'o', '--key', 'k', '--key-stdin'],
      'give --key or --key-stdin',
    ],
    [['inspect', '--store', 'redis://127.0.0.1:6379', ...record, '--key-hash', 'abc'], 'give either --record or'],
  ])('usage error %j: exit 2, the reason and the usage, an audit line', async (args, reason) => {
    const run = await cli(args);
    expect(run.code).toBe(2);
    expect(run.messages[0]).toContain(reason);
    expect(run.stderr).toContain('usage: idempotency-records');
    expect(run.audit).toMatchObject({ action: args[0] === 'inspect' ? 'inspect' : 'none', outcome: 'usage_error' });
  });

  test('a usage error after the record parsed names it in the audit line', async () => {
    const run = await cli(['inspect', '--store', 'redis://127.0.0.1:6379', ...record, '--force']);
    expect(run.code).toBe(2);
    expect(run.audit).toMatchObject({ action: 'inspect', recordRef: keyed('f'.repeat(64)), outcome: 'usage_error' });
  });

  test.each([
    ['release', 'not-a-keyring', 'IDEMPOTENCY_ENCRYPTION_KEYS: entry 1 is not id:key'],
    ['inspect', `${randomBytes(32).toString('hex')}:ops1`, 'IDEMPOTENCY_ENCRYPTION_KEYS: encryption key 1 has an id of 64 characters'],
  ])('a malformed IDEMPOTENCY_ENCRYPTION_KEYS is a usage error before any store is touched (%s, %s)', async (action, keys, reason) => {
    const port = await closedPort(); // nothing listens: a run that got as far as the store would say so instead
    const run = await cli([action, '--store', `redis://127.0.0.1:${port}`, ...record], { IDEMPOTENCY_ENCRYPTION_KEYS: keys });
    expect(run.code).toBe(2);
    expect(run.messages[0]).toContain(`idempotency-records: ${reason}`);
    expect(run.audit).toMatchObject({ action, outcome: 'usage_error' });
  });

  test('--help prints the usage on stdout, exit 0, and no audit line: it is no use of a record', async () => {
    const child = spawn(process.execPath, [CLI, '--help'], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'close')) as [number | null];
    expect(code).toBe(0);
    expect(stdout).toContain('usage: idempotency-records');
    expect(stderr).toBe('');
  });
});

describe('idempotency-records and the store it acts on', () => {
  const redis = sharedRedisStore();
  const { prefix } = redis;
  const claimed = async (): Promise<{ recordKey: string; epoch: number }> => {
    const recordKey = randomBytes(32).toString('hex');
    const epoch = await claimSilent(redis.store(), { recordKey, fingerprint: 'fp', owner: 'gone-holder', leaseMs: 600_000 });
    return { recordKey, epoch };
  };
  const base = new URL(REDIS_URL);

  test('a database the server does not have (16 of 0..15): exit 2 in one line, and the record in database 0 is untouched', async () => {
    const { recordKey } = await claimed();
    const url = `redis://${base.host}/16`;
    const run = await cli(['release', '--store', url, '--prefix', prefix, '--record', recordKey, '--reason', 'meant db 16']);
    expect(run.code).toBe(2);
    expect(run.messages).toEqual([`idempotency-records: cannot connect to ${url}: ERR DB index is out of range`]);
    expect(run.audit).toMatchObject({ action: 'release', outcome: 'connection_error', store: url, db: 16, prefix });
    expect(await redis.store().inspect(recordKey)).toMatchObject({ status: 'in_progress', ownerPresent: true });
  });

  test('the database the URL names is the one acted on, and the audit line says which', async () => {
    const other = await connect(`redis://${base.host}/1`);
    const inOne = new RedisStore({ client: other, prefix });
    try {
      const recordKey = randomBytes(32).toString('hex');
      await inOne.claim({ recordKey, fingerprint: 'fp', owner: 'o', leaseMs: 600_000 });
      const run = await cli(['inspect', '--store', `redis://${base.host}/1`, '--prefix', prefix, '--record', recordKey]);
      expect(run.code).toBe(0);
      expect(run.audit).toMatchObject({ outcome: 'in_progress', store: `redis://${base.host}/1`, db: 1, prefix });
      expect((await cli(['inspect', '--store', `redis://${base.host}/0`, '--prefix', prefix, '--record', recordKey])).code).toBe(1);
    } finally {
      await inOne.close();
      await deleteKeys(other, prefix);
      await other.quit();
    }
  });

  test('the store URL from IDEMPOTENCY_STORE_URL when --store is absent: no password in the process list', async () => {
    const { recordKey, epoch } = await claimed();
    const run = await cli(['inspect', '--prefix', prefix, '--record', recordKey], { IDEMPOTENCY_STORE_URL: REDIS_URL });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`epoch        ${epoch}`);
    expect(run.audit).toMatchObject({ outcome: 'in_progress', prefix });
  });

  test('a closed stdout (| head): the audit line is still written and the exit code is the run’s', async () => {
    const recordKey = randomBytes(32).toString('hex');
    await redis.store().claim({ recordKey, fingerprint: 'fp', owner: 'o', leaseMs: 600_000 });
    await redis.store().complete(recordKey, 'o', JSON.stringify({ statusCode: 200, body: 'x'.repeat(4 << 20) }), 600_000);
    const child = spawn(process.execPath, [CLI, 'inspect', '--store', REDIS_URL, '--prefix', prefix, '--record', recordKey, '--body'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', IDEMPOTENCY_KEY_HASH_SECRET: SECRET },
    });
    child.stdout.destroy(); // the reader went away before the body was written
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'close')) as [number | null];
    expect(stderr).not.toContain('EPIPE');
    const lines = stderr.split('\n').filter((line) => line !== '');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ action: 'inspect', recordRef: keyed(recordKey), outcome: 'completed' });
    expect(code).toBe(0);
  });

  describe('through a proxy that holds the scripts back', () => {
    let proxy: Server;
    const sockets = new Set<Socket>();
    /** Per connection: client-to-server bytes from the first script call on go `holdScriptsMs` late; replies from then on are dropped with `dropReplies`. */
    let mode: { holdScriptsMs?: number; dropReplies?: boolean } = {};
    beforeAll(async () => {
      proxy = createServer((downstream) => {
        const upstream = netConnect({ host: base.hostname, port: Number(base.port || 6379) });
        for (const socket of [downstream, upstream]) {
          sockets.add(socket);
          socket.on('error', () => undefined);
          socket.once('close', () => sockets.delete(socket));
        }
        let scripting = false;
        let queue = Promise.resolve();
        const current = mode;
        downstream.on('data', (chunk: Buffer) => {
          if (!scripting && !/EVAL/i.test(chunk.toString('latin1'))) return void upstream.write(chunk);
          scripting = true;
          const held = new Promise((resolve) => setTimeout(resolve, current.holdScriptsMs ?? 0));
          queue = queue.then(() => held).then(() => void upstream.write(chunk));
        });
        upstream.on('data', (chunk: Buffer) => {
          if (!(scripting && current.dropReplies)) downstream.write(chunk);
        });
        downstream.once('close', () => void queue.then(() => upstream.end()));
        upstream.once('close', () => downstream.destroy());
      });
      proxy.listen(0, '127.0.0.1');
      await once(proxy, 'listening');
      // The script already loaded: EVALSHA runs it at once, with no NOSCRIPT round trip for the proxy to drop.
      await redis.client().script('LOAD', operatorReleaseScript('PUBLISH'));
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      proxy.close();
      await once(proxy, 'close');
    });
    const through = () => `redis://127.0.0.1:${(proxy.address() as { port: number }).port}`;

    test('a release slower than the client library’s default command timeout (1 s) completes within --timeout-ms', async () => {
      const { recordKey, epoch } = await claimed();
      // The release reaches Redis 1.5 s after the CLI sent it: past ioredis's own default bound.
      mode = { holdScriptsMs: 1_500 };
      const run = await cli(['release', '--store', through(), '--prefix', prefix, '--record', recordKey, '--timeout-ms', '60000']);
      expect(run.code).toBe(0);
      expect(run.audit).toMatchObject({ outcome: 'released', epochBefore: epoch, epochAfter: epoch + 1 });
      expect(await redis.store().inspect(recordKey)).toBeUndefined();
    });

    test('a release whose answer never comes back: outcome unknown, "the release may have happened", and it did', async () => {
      const { recordKey } = await claimed();
      mode = { dropReplies: true };
      // Long enough for the CLI to connect and send on a loaded machine: the outcome is unknown only once it sent.
      const run = await cli(['release', '--store', through(), '--prefix', prefix, '--record', recordKey, '--timeout-ms', '5000']);
      expect(run.code).toBe(2);
      expect(run.messages).toEqual([expect.stringContaining('the release may have happened: inspect the record before trying again')]);
      expect(run.audit).toMatchObject({ action: 'release', outcome: 'unknown' });
      await waitUntil(async () => (await redis.store().inspect(recordKey)) === undefined, 30_000, 'the dropped release to have run');
    });
  });
});

describe('idempotency-records against one node of a Redis Cluster', () => {
  test('a record on another node: exit 2, one line suggesting --cluster', async () => {
    const cluster = await connectCluster();
    try {
      const recordKey = randomBytes(32).toString('hex');
      const slot = Number(await cluster.call('CLUSTER', 'KEYSLOT', redisRecordKey(recordKey)));
      const owners = new Set(cluster.slots[slot]);
      const elsewhere = clusterNodes().find(({ host, port }) => !owners.has(`${host}:${port}`));
      if (!elsewhere) throw new Error('every node given serves the slot: give REDIS_CLUSTER_NODES masters of several shards');
      const run = await cli(['inspect', '--store', `redis://${elsewhere.host}:${elsewhere.port}`, '--record', recordKey]);
      expect(run.code).toBe(2);
      expect(run.messages).toEqual([expect.stringMatching(/MOVED .*name its nodes with --cluster/)]);
      expect(run.audit).toMatchObject({ outcome: 'store_error' });
    } finally {
      await cluster.quit();
    }
  });
});
