#!/usr/bin/env node
/**
 * `idempotency-records`: look an idempotency record up, or release it,
 * through the store's own atomic operations (never around the fence). See
 * the README's "Inspect and release".
 */
import { parseArgs } from 'node:util';
import { AnswerEncryption } from '../answer-encryption';
import { encryptionKeysFromEnv, type AnswerEncryptionOptions } from '../encryption-keys';
import { isIdempotencyError, RecordVersionError } from '../errors';
import { hashKey, KEY_HASH_SECRET_ENV } from '../key-hash';
import {
  auditRecord,
  inspectRecord,
  releaseRecord,
  type RecordInspection,
  type RecordRelease,
  type RecordTarget,
} from '../operator-records';
import type { Redis } from 'ioredis';
import type { InspectableStore } from '../store';

/** Where the store's URL is read from when `--store` is absent: keeps a password out of the process list. */
const STORE_URL_ENV = 'IDEMPOTENCY_STORE_URL';

const USAGE = `usage: idempotency-records <inspect|release> [--store <redis://...|rediss://...|postgres://...>] [--cluster host:port,...]
         (--service S --operation O [--scope SC] (--key K | --key-stdin) [--key-hash H] | --record <record key>)
         [--body] [--force] [--reason TEXT] [--json] [--prefix idem:] [--schema public] [--timeout-ms 10000]

  --store       the store's URL; default: the ${STORE_URL_ENV} environment variable (keeps a password out of ps)
  --key-stdin   read the idempotency key from stdin (one line), so it is in no process list or shell history
  --key-hash    the keyHash of the log line the key is meant to match: refused unless it does
                (needs ${KEY_HASH_SECRET_ENV}, the secret the services hash keys with)
  --record      the record key as the application holds it (execution.recordKey), 64 hex digits

  inspect   show the record's state, epoch, lease or retention left, whether its holder is alive (renewed its
            lease within two heartbeats) or silent, and its stored answer's status and size (the answer itself
            with --body; decrypted when IDEMPOTENCY_ENCRYPTION_KEYS holds the keyring)
  release   end an in-progress record whose holder is silent: the holder can no longer complete, the next claim
            gets a greater epoch. A record whose holder is alive is refused unless --force: its execution may
            still charge, and the retry the release lets in charges again (a customer may be charged twice).
            A completed record is refused unless --force, which deletes its answer: the next request with this
            key executes again (a customer may be charged twice).

  Exit 0: done (inspect: a record was found). 1: absent, or release refused. 2: usage, store or timeout error.
  Every inspect or release, including a failed one, prints one JSON audit line to stderr.`;

const OPTIONS = {
  store: { type: 'string' },
  cluster: { type: 'string' },
  service: { type: 'string' },
  operation: { type: 'string' },
  scope: { type: 'string' },
  key: { type: 'string' },
  'key-stdin': { type: 'boolean' },
  'key-hash': { type: 'string' },
  record: { type: 'string' },
  body: { type: 'boolean' },
  force: { type: 'boolean' },
  reason: { type: 'string' },
  json: { type: 'boolean' },
  prefix: { type: 'string' },
  schema: { type: 'string' },
  'timeout-ms': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

/** What a run got as far as parsing, for the audit line of a usage error. */
interface Parsed {
  action?: 'inspect' | 'release';
  target?: RecordTarget;
  reason?: string;
}

class UsageError extends Error {}
class HelpRequested extends Error {}

/** Where the records are. */
type StoreAddress =
  | { kind: 'redis'; url: string; db: number }
  | { kind: 'cluster'; nodes: Array<{ host: string; port: number }>; url?: URL }
  | { kind: 'postgres'; url: string };

interface Command {
  action: 'inspect' | 'release';
  address: StoreAddress;
  target: RecordTarget;
  values: Values;
  timeoutMs: number;
  encryption?: AnswerEncryptionOptions;
}

/** A store and how to let go of it. */
interface OpenStore {
  store: InspectableStore;
  /** Redis: the key a record is kept under, for `redis-cli` (it is not the record key spelled out). */
  redisKey?(recordKey: string): string;
  close(): Promise<void>;
}

/** Parse `argv` into a command, reading the key from `stdin` for `--key-stdin`; `parsed` says how far it got. */
async function parse(argv: string[], stdin: () => Promise<string>, parsed: Parsed): Promise<Command> {
  let args;
  try {
    args = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    // Options that do not parse: the action is still the one the run was meant to be.
    const meant = argv.find((arg): arg is 'inspect' | 'release' => arg === 'inspect' || arg === 'release');
    if (meant) parsed.action = meant;
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = args;
  const [action, ...extra] = positionals;
  if (values.help) throw new HelpRequested();
  if (action !== 'inspect' && action !== 'release')
    throw new UsageError(action ? `unknown command ${JSON.stringify(action)}` : 'no command');
  parsed.action = action;
  if (values.reason !== undefined) parsed.reason = values.reason;
  if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
  const target = await recordTarget(values, stdin);
  parsed.target = target;
  const address = storeAddress(values);
  if (action === 'inspect' && (values.force || values.reason !== undefined)) throw new UsageError('--force and --reason are for release');
  if (action === 'release' && values.body) throw new UsageError('--body is for inspect');
  const timeoutMs = values['timeout-ms'] === undefined ? 10_000 : Number(values['timeout-ms']);
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) throw new UsageError('--timeout-ms is a whole number of milliseconds');
  // A keyring that does not parse is a mistake in the environment, whichever the command: said before any store is touched.
  let encryption: AnswerEncryptionOptions | undefined;
  if (process.env.IDEMPOTENCY_ENCRYPTION_KEYS?.trim()) {
    try {
      encryption = { keys: encryptionKeysFromEnv() };
      new AnswerEncryption(encryption, 'IDEMPOTENCY_ENCRYPTION_KEYS'); // checks each key as the services do: an id, 32 bytes
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error)); // names the variable itself
    }
  }
  return { action, address, target, values, timeoutMs, ...(action === 'inspect' && encryption && { encryption }) };
}

/** The record the options name: by identity (the key from argv or stdin, checked against `--key-hash`), or by record key. */
async function recordTarget(values: Values, stdin: () => Promise<string>): Promise<RecordTarget> {
  const named = [values.service, values.operation, values.key, values['key-stdin'] || undefined].filter((value) => value !== undefined);
  if (values.record !== undefined) {
    if (named.length > 0 || values.scope !== undefined || values['key-hash'] !== undefined)
      throw new UsageError('give either --record or --service/--operation/--scope/--key, not both');
    if (!/^[0-9a-f]{64}$/.test(values.record))
      throw new UsageError('--record is the record key the application holds (execution.recordKey): 64 hex digits');
    return { recordKey: values.record };
  }
  if (values.key !== undefined && values['key-stdin']) throw new UsageError('give --key or --key-stdin, not both');
  if (values.service === undefined || values.operation === undefined || (values.key === undefined && !values['key-stdin'])) {
    throw new UsageError('give --record, or --service, --operation and --key or --key-stdin (and --scope when the operation has one)');
  }
  const key = values.key ?? (await stdin()).replace(/\r?\n$/, '');
  if (key === '') throw new UsageError('--key-stdin read no key');
  const expected = values['key-hash'];
  if (expected !== undefined) {
    if (!process.env[KEY_HASH_SECRET_ENV])
      throw new UsageError(`--key-hash needs ${KEY_HASH_SECRET_ENV}, the secret the services hash keys with`);
    if (hashKey(key) !== expected.toLowerCase())
      throw new UsageError(`the key does not match --key-hash ${expected}: not the key of that log line`);
  }
  return { service: values.service, operation: values.operation, scope: values.scope ?? '', key };
}

/** The store's URL: `--store`, else the environment's. */
function storeUrl(values: Values): string | undefined {
  return values.store ?? (process.env[STORE_URL_ENV] || undefined);
}

function storeAddress(values: Values): StoreAddress {
  const raw = storeUrl(values);
  const url = raw === undefined ? undefined : safeUrl(raw);
  const protocol = url?.protocol;
  const redis = protocol === 'redis:' || protocol === 'rediss:';
  if (values.cluster !== undefined) {
    if (url && !redis) throw new UsageError('--cluster takes a redis:// or rediss:// --store (its credentials), or none');
    return { kind: 'cluster', nodes: clusterNodes(values.cluster), ...(url && { url }) };
  }
  if (!url || raw === undefined) throw new UsageError(`--store is required (or set ${STORE_URL_ENV})`);
  if (redis) return { kind: 'redis', url: raw, db: redisDb(url) };
  if (protocol === 'postgres:' || protocol === 'postgresql:') return { kind: 'postgres', url: raw };
  throw new UsageError(`--store must be redis://, rediss:// or postgres:// (got ${protocol})`);
}

/** The database a Redis URL names: its path, a whole number (ioredis would otherwise carry on in DB 0). */
function redisDb(url: URL): number {
  const path = url.pathname.replace(/^\//, '');
  if (path === '') return 0;
  if (!/^\d{1,9}$/.test(path)) throw new UsageError(`--store's database is a whole number (got ${JSON.stringify(path)})`);
  return Number(path);
}

/** The store's address without credentials, for messages and the audit line. */
function where(values: Values): string {
  if (values.cluster) return `Redis Cluster ${values.cluster}`;
  try {
    const url = new URL(storeUrl(values) as string);
    return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
  } catch {
    return 'the store';
  }
}

/** The audit line's fields that say which store, database, prefix or schema a run acted on. */
function storeFields(command: Command): Record<string, string | number> {
  const { address, values } = command;
  if (address.kind === 'postgres') return { store: where(values), schema: values.schema ?? 'public' };
  return { store: where(values), ...(address.kind === 'redis' && { db: address.db }), prefix: values.prefix ?? 'idem:' };
}

async function openStore({ address, values, timeoutMs }: Command): Promise<OpenStore> {
  if (address.kind === 'postgres') {
    const { PostgresStore, createPostgresPool } = await import('../postgres/index.js');
    // The client's own bounds follow --timeout-ms: none of them fires before it, on a store that is only slow.
    const pool = createPostgresPool(address.url, {
      max: 2,
      connectionTimeoutMillis: timeoutMs,
      query_timeout: timeoutMs,
      statement_timeout: timeoutMs,
      lock_timeout: timeoutMs,
    });
    const store = new PostgresStore({
      pool,
      ownsPool: true,
      sweepIntervalMs: 0,
      ...(values.schema !== undefined && { schema: values.schema }),
    });
    try {
      await store.ping(); // connects, so that a refused connection is told from a failed statement
    } catch (error) {
      await store.close().catch(() => undefined);
      throw error;
    }
    return { store, close: () => store.close() };
  }
  const { RedisStore, createRedisClient, createRedisCluster, redisRecordKey } = await import('../redis/index.js');
  const url = address.kind === 'cluster' ? address.url : undefined;
  const bounds = { commandTimeout: timeoutMs, connectTimeout: timeoutMs };
  const client =
    address.kind === 'cluster'
      ? createRedisCluster(address.nodes, {
          redisOptions: {
            ...bounds,
            ...(url?.username && { username: decodeURIComponent(url.username) }),
            ...(url?.password && { password: decodeURIComponent(url.password) }),
            ...(url?.protocol === 'rediss:' && { tls: {} }),
          },
          clusterRetryStrategy: () => null,
        })
      : createRedisClient(address.url, { ...bounds, retryStrategy: () => null });
  // Failures reach the command as rejections; the socket's own error says more than "Connection is closed".
  let cause: Error | undefined;
  client.on('error', (error: Error) => {
    cause ??= error;
  });
  try {
    await client.connect();
    // ioredis reports a SELECT it sent on connect that failed (a database out of range) as an error event, and
    // carries on in database 0: select again, and fail on the answer.
    if (address.kind === 'redis' && address.db !== 0) await (client as Redis).select(address.db);
  } catch (error) {
    client.disconnect();
    throw cause ?? error;
  }
  const store = new RedisStore({ client, ownsClient: true, ...(values.prefix !== undefined && { prefix: values.prefix }) });
  return { store, redisKey: (recordKey) => redisRecordKey(recordKey, values.prefix), close: () => store.close() };
}

function safeUrl(value: string): URL {
  try {
    return new URL(value);
  } catch {
    throw new UsageError('--store is not a URL');
  }
}

function clusterNodes(list: string): Array<{ host: string; port: number }> {
  return list.split(',').map((entry) => {
    const match = /^\s*([^:\s]+):(\d+)\s*$/.exec(entry);
    if (!match) throw new UsageError(`--cluster takes host:port,... (got ${JSON.stringify(entry)})`);
    return { host: match[1] as string, port: Number(match[2]) };
  });
}

/** What a run prints and how it exits. */
interface Outcome {
  code: 0 | 1 | 2;
  stdout?: string;
  /** One line for a failure. */
  error?: string;
  /** One line for what the run could not do (stderr, also with --json). */
  warning?: string;
  audit: object;
}

async function execute(command: Command, open: OpenStore): Promise<Outcome> {
  const { values } = command;
  if (command.action === 'inspect') {
    const found = await inspectRecord(open.store, command.target, {
      body: values.body === true,
      ...(command.encryption && { encryption: command.encryption }),
    });
    const { audit, ...report } = found;
    const stdout = values.json ? JSON.stringify(report) : describeInspection(report, open.redisKey?.(found.recordKey));
    return { code: found.status === 'absent' ? 1 : 0, stdout, audit };
  }
  const released = await releaseRecord(open.store, command.target, {
    force: values.force === true,
    ...(values.reason !== undefined && { reason: values.reason }),
  });
  const { audit, ...report } = released;
  const done = released.outcome === 'released' || released.outcome === 'forced' || released.outcome === 'forced_holder_alive';
  const stdout = values.json ? JSON.stringify(report) : describeRelease(report);
  const warning =
    released.outcome === 'forced' ? REPLAY_CACHE_WARNING : released.outcome === 'forced_holder_alive' ? LIVE_HOLDER_WARNING : undefined;
  return { code: done ? 0 : 1, stdout, audit, ...(warning && { warning }) };
}

function describeInspection(found: Omit<RecordInspection, 'audit'>, redisKey: string | undefined): string {
  if (found.status === 'absent') {
    return `record ${found.recordKey}: absent (never claimed, released, or its lease or retention ran out)`;
  }
  const lines = [
    `record       ${found.recordKey}`,
    ...(redisKey === undefined ? [] : [`redis key    ${redisKey}`]),
    `status       ${found.status}`,
    `epoch        ${found.epoch}`,
    `owner        ${found.ownerPresent ? 'present' : 'none'}`,
  ];
  if (found.leaseRemainingMs !== undefined) lines.push(`lease left   ${seconds(found.leaseRemainingMs)}`);
  if (found.holder !== undefined) lines.push(`renewals     ${describeHolder(found)}`);
  if (found.retentionRemainingMs !== undefined) lines.push(`kept for     ${seconds(found.retentionRemainingMs)}`);
  lines.push(`fingerprint  ${found.fingerprint}`);
  const { answer } = found;
  if (answer) {
    const size =
      answer.bytes !== undefined && answer.bytes !== answer.storedBytes
        ? `${answer.bytes} bytes (${answer.storedBytes} stored)`
        : `${answer.storedBytes} bytes`;
    lines.push(`answer       ${answer.status}, ${size}${answer.reason ? `: ${answer.reason}` : ''}`);
    if (answer.body !== undefined) lines.push('', answer.body);
  }
  return lines.join('\n');
}

function describeRelease(released: Omit<RecordRelease, 'audit'>): string {
  const { recordKey, epochBefore, epochAfter } = released;
  switch (released.outcome) {
    case 'released':
      return `record ${recordKey}: released; epoch ${epochBefore} -> ${epochAfter}. Its holder can no longer complete or renew; the next claim gets an epoch above ${epochAfter}.`;
    case 'forced_holder_alive':
      return `record ${recordKey}: in-progress record of a live holder released by force; epoch ${epochBefore} -> ${epochAfter}. Its holder may still run its side effect; the next request with this key executes again.`;
    case 'refused_holder_alive':
      return `record ${recordKey}: refused, its holder is alive (${renewalAgo(released.lastRenewalMsAgo)}, epoch ${epochBefore}). Releasing it lets a retry run the operation while the holder may still run it: a customer may be charged twice; add --force to do so.`;
    case 'forced':
      return `record ${recordKey}: completed record released by force; epoch ${epochBefore} -> ${epochAfter}. Its answer is deleted: the next request with this key executes again.`;
    case 'refused_completed':
      return `record ${recordKey}: refused, the record is completed (epoch ${epochBefore}). Releasing it deletes its answer and the next request executes again; add --force to do so.`;
    default:
      return `record ${recordKey}: absent, nothing to release`;
  }
}

/** What a forced release cannot reach: the answer kept in the memory of the processes that replayed it. */
const REPLAY_CACHE_WARNING =
  'warning: no running process is told. One that has replayed this answer keeps it in its replay cache (on by default) and goes on replaying it, ' +
  "without asking the store, for up to the cache's maxAgeMs (60 s by default), or until the retention the record had left runs out or the process restarts: " +
  'wait that long, or restart the instances of the service, for the next request to execute again.';

/** What a forced release of a live holder cannot stop: the holder's own side effect. */
const LIVE_HOLDER_WARNING =
  'warning: its holder was alive: its execution goes on until it next renews or completes, and its side effect may still happen; ' +
  'the next request with this key executes again, so a customer may be charged twice. Only a resource fenced on the epoch refuses the holder.';

/** The holder line of an inspection: alive or silent, and the renewal it is judged by. */
function describeHolder(found: Omit<RecordInspection, 'audit'>): string {
  const heartbeat =
    found.heartbeatMs === undefined
      ? 'the record keeps no heartbeat: counted alive until its lease runs out'
      : found.heartbeatMs > 0
        ? `heartbeat every ${found.heartbeatMs} ms`
        : 'no heartbeat: counted alive until its lease runs out';
  const state = found.holder === 'alive' ? 'holder alive' : 'holder silent (its lease not yet expired)';
  return `${state}, ${renewalAgo(found.lastRenewalMsAgo)} (${heartbeat})`;
}

function renewalAgo(ms: number | undefined): string {
  return ms === undefined ? 'last renewal unknown' : `last renewal ${ms} ms ago`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** The one line for a run that could not do what it was asked. */
function failure(command: Command, outcome: string, error: string): Outcome {
  const audit = auditRecord(command.action, command.target, outcome, { reason: command.values.reason });
  return { code: 2, error, audit: { ...audit, ...storeFields(command) } };
}

/** What an error of the store means for this run: whether the release may have happened, and a hint for a known mistake. */
function storeFailure(command: Command, error: unknown, sent: boolean): Outcome {
  const detail = error instanceof Error ? error.message : String(error);
  const at = where(command.values);
  // Answers that say the store did nothing: a record of another format, refused whole; a key on another cluster node.
  if (isIdempotencyError(error, RecordVersionError)) return failure(command, 'refused_format', `refused by ${at}: ${detail}`);
  if (/^MOVED /.test(detail)) {
    return failure(
      command,
      'store_error',
      `store error at ${at}: ${detail}: --store names one node of a Redis Cluster; name its nodes with --cluster host:port,...`,
    );
  }
  if (command.action === 'release' && sent) {
    return failure(
      command,
      'unknown',
      `store error at ${at}: ${detail}; the release may have happened: inspect the record before trying again`,
    );
  }
  return sent
    ? failure(command, 'store_error', `store error at ${at}: ${detail}`)
    : failure(command, 'connection_error', `cannot connect to ${at}: ${detail}`);
}

/** Write to stdout; a reader that went away (`| head`) is not an error of the run. */
function writeOut(text: string): Promise<void> {
  return new Promise((resolve) => {
    process.stdout.write(text, () => resolve());
  });
}

/** All of stdin, for `--key-stdin`. */
async function readStdin(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) text += String(chunk);
  return text;
}

/** Run one command and resolve to its exit code; every inspect or release prints one audit line to stderr. */
async function main(argv: string[]): Promise<number> {
  // EPIPE and the like arrive as an 'error' event, after the write: a closed pipe must cost neither the audit line nor the exit code.
  process.stdout.on('error', () => undefined);
  const parsed: Parsed = {};
  let command: Command;
  try {
    command = await parse(argv, readStdin, parsed);
  } catch (error) {
    if (error instanceof HelpRequested) {
      await writeOut(`${USAGE}\n`);
      return 0;
    }
    const message = (error as Error).message;
    process.stderr.write(`idempotency-records: ${message}\n${USAGE}\n`);
    // The action and the record the run was meant for, as far as they parsed: an audit trail shows a mistyped release too.
    process.stderr.write(
      `${JSON.stringify(auditRecord(parsed.action ?? 'none', parsed.target, 'usage_error', { reason: parsed.reason }))}\n`,
    );
    return 2;
  }
  let open: OpenStore | undefined;
  /** Whether the command reached the store: from then on a release may have happened, whatever the client says. */
  let sent = false;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), command.timeoutMs);
  });
  let outcome: Outcome;
  try {
    const done = await Promise.race([
      (async () => {
        open = await openStore(command);
        sent = true;
        const result = await execute(command, open);
        return { ...result, audit: { ...result.audit, ...storeFields(command) } };
      })(),
      timedOut,
    ]);
    const late = `${where(command.values)} did not answer within ${command.timeoutMs} ms`;
    outcome =
      done ??
      (command.action === 'release' && sent
        ? failure(command, 'unknown', `${late}; the release may have happened: inspect the record before trying again`)
        : failure(command, 'timeout', late));
  } catch (error) {
    outcome = storeFailure(command, error, sent);
  } finally {
    clearTimeout(timer);
  }
  if (outcome.stdout !== undefined) await writeOut(`${outcome.stdout}\n`);
  if (outcome.error !== undefined) process.stderr.write(`idempotency-records: ${outcome.error}\n`);
  if (outcome.warning !== undefined) process.stderr.write(`idempotency-records: ${outcome.warning}\n`);
  process.stderr.write(`${JSON.stringify(outcome.audit)}\n`);
  // Closing is bounded too: a store that stopped answering is not waited for.
  const closing = open?.close().catch(() => undefined);
  await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
  return outcome.code;
}

// The process exits with the code at once: a client's reconnect timer never keeps it alive.
void main(process.argv.slice(2)).then((code) => process.exit(code));
