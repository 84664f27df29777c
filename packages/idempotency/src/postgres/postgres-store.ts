import { Client, Pool, type PoolClient } from 'pg';
import {
  RecordStatus,
  type ClaimRequest,
  type ClaimResult,
  type InspectableStore,
  type OperatorReleaseResult,
  type StoredRecord,
  type StoreTransaction,
  type TransactionalStore,
} from '../store';
import { channelName } from './channel';
import { queryRetryingConflicts } from './conflicts';
import { CompletionListener } from './completion-listener';
import { MAX_TIMER_MS, positiveMs } from '../milliseconds';
import { SignalledWaits } from '../signalled-wait';
import { isUndefinedObject, migrate, quoteSchema } from './migrate';
import { isRefusal, refusal, storeAccess } from './store-access';
import { SCHEMA_VERSION } from './migrations';
import { holderState } from '../holder-liveness';
import { operatorStatements, RECORD_FORMAT, statements, type OperatorStatements, type Statements } from './sql';
import { isIdempotencyError, RecordVersionError, SchemaVersionError, StoreRefusedError } from '../errors';

/**
 * Options of {@link PostgresStore}.
 *
 * @public
 */
export interface PostgresStoreOptions {
  /**
   * The pool every statement and every transaction runs on. Give it a
   * `connectionTimeoutMillis` (and an `error` listener): a store call must
   * reject while the database is unreachable, not hang (`createPostgresPool`).
   */
  pool: Pool;
  /** The schema `migrate()` created the tables in. Default `public`. */
  schema?: string;
  /**
   * While waiting, how often the record is re-read in case it left
   * `in_progress` without a notification (a lease that ran out). Default 1000 ms.
   */
  pollIntervalMs?: number;
  /** How often ended rows are swept; `0` turns the timer off (call `sweep()` yourself). Default 60 s. */
  sweepIntervalMs?: number;
  /**
   * How long a row is kept after its lease, release or retention ended, as
   * the fence the next claim's epoch must exceed. Default 24 h, the floor
   * `RedisStore` keeps its epoch counter for.
   */
  fenceRetentionMs?: number;
  /**
   * The pool lease renewals run on, apart from `pool`: a transactional
   * action holds a connection of `pool` for as long as it runs, so with as
   * many slow actions as `pool` has connections, renewals waiting for one
   * would let every lease run out under its live holder. Default: a pool of
   * two connections with `pool`'s options, which the store creates and
   * `close()` ends; like any pool it replaces a connection that failed on
   * the next renewal.
   */
  renewPool?: Pool;
  /** Creates the dedicated LISTEN connection. Default: `new Client(pool.options)`. */
  listenClient?: () => Client;
  /** Whether `close()` also ends `pool` (and a `renewPool` you gave). Default `false`. */
  ownsPool?: boolean;
  /**
   * Whether the store applies {@link migrate} to `schema` itself, before its
   * first statement: in `connect()` (called by `IdempotencyModule` at boot)
   * or, when the database did not answer then, in the next operation or
   * `ping()`, one attempt at a time, until one succeeds. Until then every
   * operation rejects (requests fail closed) and `ping()` rejects (health
   * down), so a database that comes back after boot is migrated and served
   * without a restart. A migration that fails on a database that answers
   * (it gave up on a table lock) leaves `SchemaVersionError`, and is tried
   * again 30 s later, not by the next request: each attempt holds every
   * other query of the table up for as long as it waits. Default `false`:
   * the schema is yours to migrate, and the store checks before its first statement that it is at the version
   * this release needs; while it is not, every operation and `ping()`
   * reject with `SchemaVersionError` (never fail open on it).
   */
  migrateOnConnect?: boolean;
}

/** A claim re-runs when its snapshot predates a concurrent claim; more than a few in a row is a bug. */
const MAX_CLAIM_ATTEMPTS = 5;
/**
 * How long `migrateOnConnect` waits after a migration that failed on a
 * database that answers before it tries again: an `ALTER TABLE` waiting
 * for its lock stops every query of the table queued behind it (those of
 * the release still serving traffic) for up to `lockTimeoutMs`, so tried
 * by every request it would stop them all the time. Shared by every
 * replica through the schema (`backOffMs` of `migrate`): N replicas hold
 * the table up once per interval, not N times.
 */
const MIGRATION_RETRY_MS = 30_000;
const SWEEP_BATCH = 10_000;
/**
 * Connections of the default `renewPool`: a renewal is one short UPDATE, so
 * two carry the heartbeats of many executions, one still flowing while the
 * other waits on a row a completion holds until its COMMIT.
 */
const RENEW_POOL_SIZE = 2;

interface InspectRow {
  status: string;
  fingerprint: string;
  owner_present: boolean;
  epoch: string;
  result: string | null;
  remaining_ms: number;
  format: number;
}

/** What the operator statements read of an in-progress record's holder (`numeric` arrives as a string). */
interface HolderColumns {
  renewal_ms_ago: string | number | null;
  heartbeat_ms: number | null;
}

/** An in-progress record's last renewal and heartbeat, when its row keeps them. */
function holderOf(row: HolderColumns): { lastRenewalMsAgo?: number; heartbeatMs?: number } {
  return {
    ...(row.renewal_ms_ago !== null && { lastRenewalMsAgo: Math.max(0, Math.floor(Number(row.renewal_ms_ago))) }),
    ...(row.heartbeat_ms !== null && { heartbeatMs: row.heartbeat_ms }),
  };
}

interface ClaimRow {
  status: string;
  epoch: string | null;
  fingerprint: string | null;
  result: string | null;
  remaining_ms: number | null;
  format: number;
}

/** Refuse a row of a format this store does not read. */
function assertFormat(format: number | undefined): void {
  if (format !== undefined && format !== RECORD_FORMAT) throw new RecordVersionError(String(format), RECORD_FORMAT);
}

/**
 * A store in PostgreSQL, through node-postgres. Each operation is one
 * statement; `complete`, `release` and `renew` are compare-and-set on the
 * owner token and a live lease. Waiters are woken by `LISTEN/NOTIFY` on one
 * dedicated connection, with a poll as the safety net only. Ended rows are
 * swept by a timer.
 *
 * Its distinguishing feature is **transactional completion**
 * (`TransactionalStore`): an operation whose policy sets
 * `transactional: true` runs its action inside a transaction of this store,
 * handed over as `Execution.transaction` (a `PoolClient`); the side
 * effect written through it and the record's completion commit together.
 *
 * ```text
 *  claim: INSERT .. ON CONFLICT DO UPDATE WHERE expired   (autocommit, before the action)
 *  BEGIN
 *    INSERT INTO ledger ...                                 (the action, through `transaction`)
 *    UPDATE idempotency_records SET completed ... WHERE owner = $me AND lease live; pg_notify
 *  COMMIT                                                   (or ROLLBACK: neither survives)
 * ```
 *
 * The schema comes from {@link migrate}, which must have run first, or
 * which the store runs itself under `migrateOnConnect`.
 *
 * @example
 * import { Pool } from 'pg';
 * import { PostgresStore, migrate, postgresTransaction } from '@idempotency-chain/idempotency/postgres';
 *
 * const pool = createPostgresPool(process.env.DATABASE_URL!);
 * await migrate(pool);
 * const store = new PostgresStore({ pool });
 * const idempotency = new IdempotencyCoordinator({
 *   service: 'payments', store, operations: { 'payments.charge': { transactional: true } },
 * });
 * await idempotency.run({ operation: 'payments.charge', key, fingerprint }, async (execution) => {
 *   const tx = postgresTransaction(execution);
 *   const { rows } = await tx.query('INSERT INTO ledger (order_id, amount_cents) VALUES ($1, $2) RETURNING id', [orderId, 500]);
 *   return { statusCode: 201, body: { chargeId: rows[0].id } };
 * });
 *
 * @public
 */
export class PostgresStore implements TransactionalStore<PoolClient>, InspectableStore {
  private readonly pool: Pool;
  private readonly renewPool: Pool;
  private readonly ownsRenewPool: boolean;
  private readonly sql: Statements;
  private readonly operatorSql: OperatorStatements;
  private readonly channel: string;
  private readonly fenceRetentionMs: number;
  private readonly ownsPool: boolean;
  private readonly schema: string;
  private readonly listener: CompletionListener;
  private readonly sweeper: NodeJS.Timeout | undefined;
  /** One wait per record however many requests wait on it; `close()` resolves them all. */
  private readonly waits: SignalledWaits;
  private closed = false;
  private readonly migrateOnConnect: boolean;
  /** Whether the schema was found at {@link SCHEMA_VERSION} (migrated first under `migrateOnConnect`). */
  private schemaReady = false;
  /** That check (and migration) in flight, shared by every caller; cleared when it fails. */
  private readiness: Promise<void> | undefined;
  /** Under `migrateOnConnect`, when a migration may be tried again after one failed on a database that answers. */
  private migrateAfter = 0;

  constructor(options: PostgresStoreOptions) {
    const schema = options.schema ?? 'public';
    this.pool = options.pool;
    this.sql = statements(quoteSchema(schema));
    this.operatorSql = operatorStatements(quoteSchema(schema));
    this.ownsRenewPool = !options.renewPool || (options.ownsPool ?? false);
    this.renewPool = options.renewPool ?? renewPoolFor(options.pool);
    this.channel = channelName(schema);
    this.waits = new SignalledWaits(positiveMs('pollIntervalMs', options.pollIntervalMs ?? 1000));
    this.fenceRetentionMs = positiveMs('fenceRetentionMs', options.fenceRetentionMs ?? 24 * 60 * 60 * 1000);
    this.ownsPool = options.ownsPool ?? false;
    this.migrateOnConnect = options.migrateOnConnect ?? false;
    this.schema = schema;
    const pool = this.pool;
    this.listener = new CompletionListener(options.listenClient ?? (() => new Client(pool.options)), `"${this.channel}"`);
    const sweepIntervalMs = options.sweepIntervalMs ?? 60_000;
    if (sweepIntervalMs > 0) {
      // A failed sweep (database down) is retried on the next tick.
      this.sweeper = setInterval(() => void this.sweep().catch(() => undefined), Math.min(sweepIntervalMs, MAX_TIMER_MS));
      this.sweeper.unref();
    }
  }

  async claim(request: ClaimRequest): Promise<ClaimResult> {
    return this.guarded(() => this.claimRecord(request));
  }

  private async claimRecord({ recordKey, fingerprint, owner, leaseMs, heartbeatMs }: ClaimRequest): Promise<ClaimResult> {
    const lease = positiveMs('leaseMs', leaseMs);
    const heartbeat = heartbeatMs === undefined ? null : Math.max(0, Math.floor(heartbeatMs));
    for (let attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt += 1) {
      const { rows } = await queryRetryingConflicts<ClaimRow>(this.pool, this.sql.claim, [recordKey, fingerprint, owner, lease, heartbeat]);
      const row = rows[0];
      assertFormat(row?.format);
      if (row?.status === 'claimed') return { status: 'claimed', epoch: Number(row.epoch) };
      const remaining = Math.ceil(row?.remaining_ms ?? 0);
      // No row, or one that had ended: the snapshot predates a concurrent claim; read again.
      if (!row || remaining <= 0 || row.status === 'released') continue;
      if (row.status === 'completed')
        return { status: 'completed', fingerprint: String(row.fingerprint), result: String(row.result), remainingMs: remaining };
      return { status: 'in_progress', fingerprint: String(row.fingerprint), leaseRemainingMs: remaining };
    }
    throw new Error(`The claim of an idempotency record lost ${MAX_CLAIM_ATTEMPTS} races in a row`);
  }

  async complete(recordKey: string, owner: string, result: string, retentionMs: number): Promise<boolean> {
    const retention = positiveMs('retentionMs', retentionMs);
    return this.guarded(
      async () =>
        (await queryRetryingConflicts(this.pool, this.sql.complete, [recordKey, owner, result, retention, this.channel])).rowCount === 1,
    );
  }

  async release(recordKey: string, owner: string): Promise<boolean> {
    return this.guarded(
      async () => (await queryRetryingConflicts(this.pool, this.sql.release, [recordKey, owner, this.channel])).rowCount === 1,
    );
  }

  async renew(recordKey: string, owner: string, leaseMs: number): Promise<boolean> {
    const lease = positiveMs('leaseMs', leaseMs);
    return this.guarded(
      async () => (await queryRetryingConflicts(this.renewPool, this.sql.renew, [recordKey, owner, lease])).rowCount === 1,
    );
  }

  /**
   * Open the transaction an execution's side effect joins (see the class
   * doc). Its `complete` runs the same compare-and-set as {@link complete}
   * inside it, then COMMITs; a lost lease rolls the whole transaction back.
   */
  async begin(recordKey: string, owner: string): Promise<StoreTransaction<PoolClient>> {
    return this.guarded(() => this.open(recordKey, owner));
  }

  private async open(recordKey: string, owner: string): Promise<StoreTransaction<PoolClient>> {
    const client = await this.pool.connect();
    // A checked-out connection that dies emits 'error', fatal when nobody listens;
    // the failure reaches the transaction as a rejected query instead.
    const ignore = (): void => undefined;
    client.on('error', ignore);
    try {
      // Explicitly: at REPEATABLE READ or SERIALIZABLE (a database's default may be either), the
      // completion's UPDATE would fail to serialize against the renewals committed since the snapshot.
      await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
    } catch (error) {
      client.off('error', ignore);
      client.release(true);
      throw error;
    }
    return new PostgresTransaction(client, this.sql, [recordKey, owner], this.channel, () => client.off('error', ignore));
  }

  /** The live record at `recordKey`, read by one statement (see `InspectableStore`). */
  async inspect(recordKey: string): Promise<StoredRecord | undefined> {
    const { rows } = await this.guarded(() =>
      queryRetryingConflicts<InspectRow & HolderColumns>(this.pool, this.operatorSql.inspect, [recordKey]),
    );
    const row = rows[0];
    if (!row) return undefined;
    assertFormat(row.format);
    if (row.status !== RecordStatus.InProgress && row.status !== RecordStatus.Completed) {
      throw new Error(`Unexpected idempotency record status ${JSON.stringify(row.status)}`);
    }
    return {
      status: row.status,
      epoch: Number(row.epoch),
      ownerPresent: row.owner_present,
      remainingMs: Math.max(0, Math.ceil(row.remaining_ms)),
      fingerprint: row.fingerprint,
      ...holderOf(row),
      ...(row.result !== null && { result: row.result }),
    };
  }

  /**
   * End the record whoever holds it, in one transaction: lock the live row
   * (after a transactional completion holding it commits or rolls back),
   * then release it with its epoch moved one past the holder's (see
   * `InspectableStore`).
   */
  async releaseByOperator(recordKey: string, { force }: { force: boolean }): Promise<OperatorReleaseResult> {
    return this.guarded(() => this.releaseLocked(recordKey, force));
  }

  private async releaseLocked(recordKey: string, force: boolean): Promise<OperatorReleaseResult> {
    const client = await this.pool.connect();
    const ignore = (): void => undefined;
    client.on('error', ignore);
    let failed = false;
    try {
      await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
      const { rows } = await client.query<{ status: string; epoch: string; format: number } & HolderColumns>(this.operatorSql.lock, [
        recordKey,
      ]);
      const row = rows[0];
      assertFormat(row?.format);
      const completed = row?.status === RecordStatus.Completed;
      const holder = row && !completed ? holderOf(row) : {};
      const alive = row !== undefined && !completed && holderState(holder.lastRenewalMsAgo, holder.heartbeatMs) === 'alive';
      let result: OperatorReleaseResult;
      if (!row) result = { outcome: 'absent' };
      else if (completed && !force) result = { outcome: 'refused_completed', epochBefore: Number(row.epoch) };
      else if (alive && !force) {
        result = {
          outcome: 'refused_holder_alive',
          epochBefore: Number(row.epoch),
          ...(holder.lastRenewalMsAgo !== undefined && { lastRenewalMsAgo: holder.lastRenewalMsAgo }),
        };
      } else {
        const ended = await client.query<{ epoch: string }>(this.operatorSql.end, [recordKey, this.channel]);
        const outcome = completed ? 'forced' : alive ? 'forced_holder_alive' : 'released';
        result = { outcome, epochBefore: Number(row.epoch), epochAfter: Number(ended.rows[0]?.epoch) };
      }
      await client.query('COMMIT');
      return result;
    } catch (error) {
      failed = true;
      // Rolled back, or the connection is gone, which rolls back too; either way it is not reused.
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.off('error', ignore);
      client.release(failed);
    }
  }

  async waitForChange(recordKey: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    await this.ready();
    return this.waits.wait(
      recordKey,
      () => ({
        join: (wake) => this.listener.join(recordKey, wake),
        leave: (wake) => this.listener.leave(recordKey, wake),
        inProgress: async () => {
          const { rows } = await this.guarded(() =>
            queryRetryingConflicts<{ format: number }>(this.pool, this.sql.inProgress, [recordKey]),
          );
          assertFormat(rows[0]?.format);
          return rows.length > 0;
        },
      }),
      timeoutMs,
      signal,
    );
  }

  /**
   * Delete rows that ended more than `fenceRetentionMs` ago, in batches.
   * Runs on the store's timer; call it yourself with `sweepIntervalMs: 0`.
   * @returns How many rows were deleted.
   */
  async sweep(): Promise<number> {
    let total = 0;
    for (;;) {
      const { rowCount } = await this.guarded(() =>
        queryRetryingConflicts(this.pool, this.sql.sweep, [this.fenceRetentionMs, SWEEP_BATCH]),
      );
      total += rowCount ?? 0;
      if ((rowCount ?? 0) < SWEEP_BATCH) return total;
    }
  }

  /** Check that the database answers, and apply the migrations under `migrateOnConnect`. */
  async connect(): Promise<void> {
    await this.ping();
  }

  /**
   * Resolve when the database answers, the store's role may use its table
   * (USAGE on the schema; SELECT, INSERT, UPDATE on `idempotency_records`,
   * and DELETE when it sweeps on its timer, asked of the catalogs, so a role without them
   * leaves no error in the server's log) and its schema is at the version
   * this release needs, applying the migrations first under
   * `migrateOnConnect`. Rejects with `StoreRefusedError`, naming the GRANT,
   * while the role may not (or the server refuses its login), and with
   * `SchemaVersionError` while the schema is behind.
   */
  async ping(): Promise<void> {
    await this.ready();
    await this.checkSchema();
  }

  /** Resolve pending waits, stop the sweep, end the LISTEN connection and the renewals' pool, and the pool if owned. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweeper);
    this.waits.close();
    await this.listener.close();
    if (this.ownsRenewPool) await this.renewPool.end();
    if (this.ownsPool) await this.pool.end();
  }

  /**
   * Refuse a closed store, and one whose schema is behind this release:
   * under `migrateOnConnect`, apply the migrations first. Done once, one
   * attempt at a time (concurrent callers share it; the next caller after a
   * failure tries again).
   */
  private async ready(): Promise<void> {
    if (this.closed) throw new Error('PostgresStore is closed');
    if (this.schemaReady) return;
    this.readiness ??= (async () => {
      if (this.migrateOnConnect && Date.now() >= this.migrateAfter) {
        await migrate(this.pool, { schema: this.schema, backOffMs: MIGRATION_RETRY_MS }).catch((error: unknown) =>
          this.migrationFailed(error),
        );
      }
      await this.checkSchema();
    })().then(
      () => {
        this.schemaReady = true;
      },
      (error: unknown) => {
        this.readiness = undefined;
        throw error;
      },
    );
    await this.readiness;
  }

  /**
   * A migration that failed on a database that answers (it gave up on a
   * table lock held past `lockTimeoutMs`, or the role may not alter the
   * table) left the schema where it was: behind, that is
   * `SchemaVersionError`, which the coordinator never fails open on, and
   * the next attempt waits {@link MIGRATION_RETRY_MS}; at this release's
   * version already, there was nothing to migrate, and the store is served
   * (a least-privilege role may not even run the `CREATE ... IF NOT EXISTS`
   * every migration starts with). A database that does not answer is an
   * outage, and rejects as it did.
   */
  private async migrationFailed(error: unknown): Promise<void> {
    const found = await this.schemaVersion().catch((failure: unknown) => failure);
    if (isIdempotencyError(found, StoreRefusedError)) throw found;
    if (typeof found !== 'number') throw error;
    if (found >= SCHEMA_VERSION) return;
    this.migrateAfter = Date.now() + MIGRATION_RETRY_MS;
    throw new SchemaVersionError(this.schema, found, SCHEMA_VERSION, { cause: error });
  }

  /**
   * Reject with `StoreRefusedError` unless the role may use the store's
   * table, and with `SchemaVersionError` unless `schema` is at
   * {@link SCHEMA_VERSION} or later.
   */
  private async checkSchema(): Promise<void> {
    const found = await this.schemaVersion();
    if (found < SCHEMA_VERSION) throw new SchemaVersionError(this.schema, found, SCHEMA_VERSION);
  }

  /** The schema's version as the role sees it; `StoreRefusedError` when it may not use the store (see `storeAccess`). */
  private schemaVersion(): Promise<number> {
    return storeAccess(this.pool, this.schema, quoteSchema(this.schema), this.sweeper !== undefined);
  }

  /**
   * Run one operation on a ready store. A database that answers but refuses
   * the operation, which the coordinator must refuse rather than fail open
   * on, rejects as such: a table, column or schema gone since the check as
   * `SchemaVersionError`; a login refused, or a grant missing (revoked
   * since the check), as `StoreRefusedError` naming the GRANT. Either one
   * sends the next operation through the check again, which asks the
   * catalogs instead of failing one more statement.
   */
  private async guarded<T>(operation: () => Promise<T>): Promise<T> {
    await this.ready();
    try {
      return await operation();
    } catch (error) {
      if (isUndefinedObject(error)) {
        this.schemaReady = false;
        const found = await this.schemaVersion().catch((failure: unknown) =>
          isIdempotencyError(failure, StoreRefusedError) ? failure : 0,
        );
        throw typeof found === 'number' ? new SchemaVersionError(this.schema, found, SCHEMA_VERSION, { cause: error }) : found;
      }
      if (!isRefusal(error)) throw error;
      this.schemaReady = false;
      throw refusal(error, await this.schemaVersion().catch((failure: unknown) => failure)) ?? error;
    }
  }
}

/** The default `renewPool`: `pool`'s connection settings, {@link RENEW_POOL_SIZE} connections. */
function renewPoolFor(pool: Pool): Pool {
  const renewPool = new Pool({ ...pool.options, max: RENEW_POOL_SIZE });
  // An idle connection that dies (the server restarted) is dropped; the next renewal opens another.
  renewPool.on('error', () => undefined);
  return renewPool;
}

/** One execution's transaction: the action's side effect, then the completion, then COMMIT. */
class PostgresTransaction implements StoreTransaction<PoolClient> {
  private ended = false;

  constructor(
    readonly handle: PoolClient,
    private readonly sql: Statements,
    private readonly record: [recordKey: string, owner: string],
    private readonly channel: string,
    private readonly detach: () => void,
  ) {}

  async complete(result: string, retentionMs: number): Promise<boolean> {
    this.end();
    const [recordKey, owner] = this.record;
    let completed: boolean;
    try {
      const update = await this.handle.query(this.sql.complete, [
        recordKey,
        owner,
        result,
        positiveMs('retentionMs', retentionMs),
        this.channel,
      ]);
      completed = update.rowCount === 1;
    } catch (error) {
      await this.discard();
      throw error;
    }
    if (!completed) {
      await this.discard();
      return false;
    }
    try {
      // COMMIT of a transaction the action left aborted answers ROLLBACK, not an error.
      const commit = await this.handle.query('COMMIT');
      if (commit.command !== 'COMMIT') throw new Error('The transaction was rolled back at COMMIT (did the action swallow an error?)');
    } catch (error) {
      this.giveBack(true);
      throw error;
    }
    this.giveBack(false);
    return true;
  }

  async rollback(): Promise<void> {
    this.end();
    await this.discard();
  }

  /** ROLLBACK and give the connection back; a connection that cannot roll back is destroyed, which rolls back too. */
  private async discard(): Promise<void> {
    try {
      await this.handle.query('ROLLBACK');
      this.giveBack(false);
    } catch {
      this.giveBack(true);
    }
  }

  private giveBack(destroy: boolean): void {
    this.detach();
    this.handle.release(destroy);
  }

  private end(): void {
    if (this.ended) throw new Error('This idempotency transaction has already ended');
    this.ended = true;
  }
}
