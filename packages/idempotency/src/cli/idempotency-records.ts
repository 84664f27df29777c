#!/usr/bin/env node
/**
 * `idempotency-records`: look an idempotency record up, or release it,
 * through the store's own atomic operations (never around the fence). See
 * the README's "Inspect and release".
 */
import { parseArgs } from 'node:util';
import { encryptionKeysFromEnv, type AnswerEncryptionOptions } from '../encryption-keys';
import {
  auditRecord,
  inspectRecord,
  releaseRecord,
  targetRecordKey,
  type RecordInspection,
  type RecordRelease,
  type RecordTarget,
} from '../operator-records';
import type { InspectableStore } from '../store';

const USAGE = `usage: idempotency-records <inspect|release> --store <redis://...|rediss://...|postgres://...> [--cluster host:port,...]
         (--service S --operation O [--scope SC] --key K | --record <record key>)
         [--body] [--force] [--reason TEXT] [--json] [--prefix idem:] [--schema public] [--timeout-ms 10000]

  inspect   show the record's state, epoch, lease or retention left, and its stored answer's status and size
            (the answer itself with --body; decrypted when IDEMPOTENCY_ENCRYPTION_KEYS holds the keyring)
  release   end an in-progress record whoever holds it: the holder can no longer complete, the next claim gets
            a greater epoch. A completed record is refused unless --force, which deletes its answer: the next
            request with this key executes again (a customer may be charged twice).

  Exit 0: done (inspect: a record was found). 1: absent, or release refused. 2: usage, store or timeout error.
  Every run prints one JSON audit line to stderr.`;

const OPTIONS = {
  store: { type: 'string' },
  cluster: { type: 'string' },
  service: { type: 'string' },
  operation: { type: 'string' },
  scope: { type: 'string' },
  key: { type: 'string' },
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

class UsageError extends Error {}
class HelpRequested extends Error {}

/** Where the records are. */
type StoreAddress =
  | { kind: 'redis'; url: string }
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
  close(): Promise<void>;
}

function parse(argv: string[]): Command {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  const [action, ...extra] = positionals;
  if (values.help) throw new HelpRequested();
  if (action !== 'inspect' && action !== 'release')
    throw new UsageError(action ? `unknown command ${JSON.stringify(action)}` : 'no command');
  if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
  const address = storeAddress(values);
  if (action === 'inspect' && (values.force || values.reason !== undefined)) throw new UsageError('--force and --reason are for release');
  if (action === 'release' && values.body) throw new UsageError('--body is for inspect');
  const named = [values.service, values.operation, values.key].filter((value) => value !== undefined).length;
  let target: RecordTarget;
  if (values.record !== undefined) {
    if (named > 0 || values.scope !== undefined)
      throw new UsageError('give either --record or --service/--operation/--scope/--key, not both');
    if (!/^[0-9a-f]{64}$/.test(values.record)) throw new UsageError('--record is the record key the logs print: 64 hex digits');
    target = { recordKey: values.record };
  } else {
    if (named < 3) throw new UsageError('give --record, or --service, --operation and --key (and --scope when the operation has one)');
    target = { service: values.service!, operation: values.operation!, scope: values.scope ?? '', key: values.key! };
  }
  const timeoutMs = values['timeout-ms'] === undefined ? 10_000 : Number(values['timeout-ms']);
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) throw new UsageError('--timeout-ms is a whole number of milliseconds');
  let encryption: AnswerEncryptionOptions | undefined;
  if (action === 'inspect' && process.env.IDEMPOTENCY_ENCRYPTION_KEYS?.trim()) {
    try {
      encryption = { keys: encryptionKeysFromEnv() };
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error));
    }
  }
  return { action, address, target, values, timeoutMs, ...(encryption && { encryption }) };
}

function storeAddress(values: Values): StoreAddress {
  const url = values.store === undefined ? undefined : safeUrl(values.store);
  const protocol = url?.protocol;
  const redis = protocol === 'redis:' || protocol === 'rediss:';
  if (values.cluster !== undefined) {
    if (url && !redis) throw new UsageError('--cluster takes a redis:// or rediss:// --store (its credentials), or none');
    return { kind: 'cluster', nodes: clusterNodes(values.cluster), ...(url && { url }) };
  }
  if (!url) throw new UsageError('--store is required');
  if (redis) return { kind: 'redis', url: values.store as string };
  if (protocol === 'postgres:' || protocol === 'postgresql:') return { kind: 'postgres', url: values.store as string };
  throw new UsageError(`--store must be redis://, rediss:// or postgres:// (got ${protocol})`);
}

/** The store's address without credentials, for messages. */
function where(values: Values): string {
  if (values.cluster) return `Redis Cluster ${values.cluster}`;
  try {
    const url = new URL(values.store as string);
    return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
  } catch {
    return 'the store';
  }
}

async function openStore({ address, values }: Command): Promise<OpenStore> {
  if (address.kind === 'postgres') {
    const { PostgresStore, createPostgresPool } = await import('../postgres/index.js');
    const pool = createPostgresPool(address.url, { max: 2 });
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
  const { RedisStore, createRedisClient, createRedisCluster } = await import('../redis/index.js');
  const url = address.kind === 'cluster' ? address.url : undefined;
  const client =
    address.kind === 'cluster'
      ? createRedisCluster(address.nodes, {
          redisOptions: {
            ...(url?.username && { username: decodeURIComponent(url.username) }),
            ...(url?.password && { password: decodeURIComponent(url.password) }),
            ...(url?.protocol === 'rediss:' && { tls: {} }),
          },
          clusterRetryStrategy: () => null,
        })
      : createRedisClient(address.url, { retryStrategy: () => null });
  // Failures reach the command as rejections; the socket's own error says more than "Connection is closed".
  let cause: Error | undefined;
  client.on('error', (error: Error) => {
    cause ??= error;
  });
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    throw cause ?? error;
  }
  const store = new RedisStore({ client, ownsClient: true, ...(values.prefix !== undefined && { prefix: values.prefix }) });
  return { store, close: () => store.close() };
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
  audit: ReturnType<typeof auditRecord>;
}

async function execute(command: Command, open: OpenStore): Promise<Outcome> {
  const { values } = command;
  if (command.action === 'inspect') {
    const found = await inspectRecord(open.store, command.target, {
      body: values.body === true,
      ...(command.encryption && { encryption: command.encryption }),
    });
    const { audit, ...report } = found;
    return { code: found.status === 'absent' ? 1 : 0, stdout: values.json ? JSON.stringify(report) : describeInspection(report), audit };
  }
  const released = await releaseRecord(open.store, command.target, {
    force: values.force === true,
    ...(values.reason !== undefined && { reason: values.reason }),
  });
  const { audit, ...report } = released;
  const code = released.outcome === 'released' || released.outcome === 'forced' ? 0 : 1;
  return { code, stdout: values.json ? JSON.stringify(report) : describeRelease(report), audit };
}

function describeInspection(found: Omit<RecordInspection, 'audit'>): string {
  if (found.status === 'absent') {
    return `record ${found.recordKey}: absent (never claimed, released, or its lease or retention ran out)`;
  }
  const lines = [
    `record       ${found.recordKey}`,
    `status       ${found.status}`,
    `epoch        ${found.epoch}`,
    `owner        ${found.ownerPresent ? 'present' : 'none'}`,
  ];
  if (found.leaseRemainingMs !== undefined) lines.push(`lease left   ${seconds(found.leaseRemainingMs)}`);
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
    case 'forced':
      return `record ${recordKey}: completed record released by force; epoch ${epochBefore} -> ${epochAfter}. Its answer is deleted: the next request with this key executes again.`;
    case 'refused_completed':
      return `record ${recordKey}: refused, the record is completed (epoch ${epochBefore}). Releasing it deletes its answer and the next request executes again; add --force to do so.`;
    default:
      return `record ${recordKey}: absent, nothing to release`;
  }
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** The one line for a run that could not do what it was asked. */
function failure(command: Command, recordKey: string, outcome: string, error: string): Outcome {
  return { code: 2, error, audit: auditRecord(command.action, recordKey, outcome, { reason: command.values.reason }) };
}

/** Run one command and resolve to its exit code; every run prints one audit line to stderr. */
async function main(argv: string[]): Promise<number> {
  let command: Command;
  try {
    command = parse(argv);
  } catch (error) {
    if (error instanceof HelpRequested) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    const message = (error as Error).message;
    process.stderr.write(`idempotency-records: ${message}\n${USAGE}\n`);
    // The action the run was meant to be, when it got that far: an audit trail shows a mistyped release too.
    const meant = argv.find((arg) => arg === 'inspect' || arg === 'release') ?? 'none';
    process.stderr.write(`${JSON.stringify(auditRecord(meant, undefined, 'usage_error', {}))}\n`);
    return 2;
  }
  const recordKey = targetRecordKey(command.target);
  let open: OpenStore | undefined;
  let connected = false;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), command.timeoutMs);
  });
  let outcome: Outcome;
  try {
    const done = await Promise.race([
      (async () => {
        open = await openStore(command);
        connected = true;
        return execute(command, open);
      })(),
      timedOut,
    ]);
    // A release sent before the timeout may still run on the server: say so, rather than guess.
    const unknown =
      command.action === 'release' && connected ? '; the release may have happened: inspect the record before trying again' : '';
    outcome =
      done ?? failure(command, recordKey, 'timeout', `${where(command.values)} did not answer within ${command.timeoutMs} ms${unknown}`);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    outcome = connected
      ? failure(command, recordKey, 'store_error', `store error at ${where(command.values)}: ${detail}`)
      : failure(command, recordKey, 'connection_error', `cannot connect to ${where(command.values)}: ${detail}`);
  } finally {
    clearTimeout(timer);
  }
  if (outcome.stdout !== undefined) process.stdout.write(`${outcome.stdout}\n`);
  if (outcome.error !== undefined) process.stderr.write(`idempotency-records: ${outcome.error}\n`);
  process.stderr.write(`${JSON.stringify(outcome.audit)}\n`);
  // Closing is bounded too: a store that stopped answering is not waited for.
  const closing = open?.close().catch(() => undefined);
  await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
  return outcome.code;
}

// The process exits with the code at once: a client's reconnect timer never keeps it alive.
void main(process.argv.slice(2)).then((code) => process.exit(code));
