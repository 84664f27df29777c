import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Pool, PoolClient } from 'pg';

/** One line of the ledger: money taken from an account. */
export interface Charge {
  chargeId: string;
  orderId: string;
  account: string;
  amountCents: number;
  /** Fencing epoch of the execution that wrote it (0: unprotected). */
  epoch: number;
  at: string;
}

/** Who is writing: the idempotency record and its fencing epoch. */
export interface Fence {
  recordKey: string;
  epoch: number;
  /** The store's transaction, when the record completes in the same commit (Postgres). */
  transaction?: unknown;
}

/** A write refused because a newer execution of the same record already wrote. */
export class StaleWriteError extends Error {
  override name = 'StaleWriteError';
}

/**
 * The payments ledger, the lab's ground truth. A write carrying a fence is
 * checked twice, in one atomic step with the write:
 * - refused when an execution with a newer epoch of the same record has been
 *   seen: a holder that lost its lease cannot charge after its successor;
 * - answered with the record's existing charge when there is one: an
 *   execution that charged and crashed before completing its record is not
 *   charged again by the retry that takes the record over.
 */
export interface Ledger {
  charge(entry: Omit<Charge, 'chargeId' | 'epoch' | 'at'>, fence?: Fence): Promise<Charge>;
  chargesOf(orderId: string): Promise<Charge[]>;
}

function newCharge(entry: Omit<Charge, 'chargeId' | 'epoch' | 'at'>, fence?: Fence): Charge {
  return { chargeId: `ch_${randomUUID()}`, ...entry, epoch: fence?.epoch ?? 0, at: new Date().toISOString() };
}

/** An entry kept for a record as long as `RedisLedger` keeps its key. */
interface Expiring<T> {
  value: T;
  expiresAt: number;
}

/**
 * A ledger in this process: lost with it. What it keeps per record (the
 * newest epoch, the record's charge) lives as long as the record's retention,
 * as `RedisLedger`'s keys do: a re-execution after the record expired is a
 * new charge on either ledger, and memory stays bounded by retention.
 */
export class MemoryLedger implements Ledger {
  private readonly charges = new Map<string, Charge[]>();
  private readonly fences = new Map<string, Expiring<number>>();
  private readonly byRecord = new Map<string, Expiring<Charge>>();

  constructor(
    private readonly retentionMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async charge(entry: Omit<Charge, 'chargeId' | 'epoch' | 'at'>, fence?: Fence): Promise<Charge> {
    const now = this.now();
    this.forgetExpired(now);
    if (fence) {
      if ((this.fences.get(fence.recordKey)?.value ?? 0) > fence.epoch) throw new StaleWriteError('stale fencing epoch');
      // Re-inserted, so both maps stay in expiry order (see forgetExpired).
      this.fences.delete(fence.recordKey);
      this.fences.set(fence.recordKey, { value: fence.epoch, expiresAt: now + this.retentionMs });
      const existing = this.byRecord.get(fence.recordKey);
      if (existing) return existing.value;
    }
    const charge = newCharge(entry, fence);
    if (fence) this.byRecord.set(fence.recordKey, { value: charge, expiresAt: now + this.retentionMs });
    this.charges.set(entry.orderId, [...(this.charges.get(entry.orderId) ?? []), charge]);
    return charge;
  }

  async chargesOf(orderId: string): Promise<Charge[]> {
    return this.charges.get(orderId) ?? [];
  }

  /** Entries are inserted with one TTL, in time order: the expired ones are at the front. */
  private forgetExpired(now: number): void {
    for (const map of [this.fences, this.byRecord] as Array<Map<string, Expiring<unknown>>>) {
      for (const [key, entry] of map) {
        if (entry.expiresAt > now) break;
        map.delete(key);
      }
    }
  }
}

/**
 * Check the fence, look for the record's charge and append a new one in one
 * step: the refusal, the lookup and the write cannot interleave with another
 * writer's. KEYS[1] fence, KEYS[2] the record's charge (both empty without a
 * fence), KEYS[3] the order's charges; ARGV: epoch, charge JSON, TTL ms.
 * Returns 0 (stale), the existing charge's JSON, or 1 (written).
 */
const CHARGE_SCRIPT = `
if KEYS[1] ~= '' then
  local seen = tonumber(redis.call('GET', KEYS[1]) or '0')
  if seen > tonumber(ARGV[1]) then return 0 end
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
  local existing = redis.call('GET', KEYS[2])
  if existing then return existing end
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
end
redis.call('RPUSH', KEYS[3], ARGV[2])
return 1`;

/** A ledger in Redis: it survives a restart of the payments process. */
export class RedisLedger implements Ledger {
  constructor(
    private readonly redis: Redis,
    private readonly fenceTtlMs: number,
    private readonly prefix = 'lab:ledger:',
  ) {}

  async charge(entry: Omit<Charge, 'chargeId' | 'epoch' | 'at'>, fence?: Fence): Promise<Charge> {
    const charge = newCharge(entry, fence);
    const written = await this.redis.eval(
      CHARGE_SCRIPT,
      3,
      fence ? `${this.prefix}fence:{${fence.recordKey}}` : '',
      fence ? `${this.prefix}charge:{${fence.recordKey}}` : '',
      this.chargesKey(entry.orderId),
      String(charge.epoch),
      JSON.stringify(charge),
      String(this.fenceTtlMs),
    );
    if (written === 0) throw new StaleWriteError('stale fencing epoch');
    return typeof written === 'string' ? (JSON.parse(written) as Charge) : charge;
  }

  async chargesOf(orderId: string): Promise<Charge[]> {
    const lines = await this.redis.lrange(this.chargesKey(orderId), 0, -1);
    return lines.map((line) => JSON.parse(line) as Charge);
  }

  private chargesKey(orderId: string): string {
    return `${this.prefix}charges:${encodeURIComponent(orderId)}`;
  }
}

/**
 * The naive ledger of the lab's demonstrations (`LAB_NAIVE=plain-ledger`):
 * every write is a new charge, whatever record or epoch it came from.
 */
export class PlainLedger implements Ledger {
  constructor(private readonly inner: Ledger) {}

  charge(entry: Omit<Charge, 'chargeId' | 'epoch' | 'at'>): Promise<Charge> {
    return this.inner.charge(entry);
  }

  chargesOf(orderId: string): Promise<Charge[]> {
    return this.inner.chargesOf(orderId);
  }
}

/**
 * A ledger in PostgreSQL, beside the idempotency records. A charge written
 * through the execution's transaction commits with the record's completion
 * or not at all, so it needs no keying or fencing of its own: a process
 * killed between the insert and the commit leaves neither behind.
 */
export class PostgresLedger implements Ledger {
  constructor(private readonly pool: Pool) {}

  /** Create the ledger's table once, at start-up. */
  async open(): Promise<this> {
    await this.pool.query(`CREATE TABLE IF NOT EXISTS lab_charges (
      charge_id text PRIMARY KEY, order_id text NOT NULL, account text NOT NULL,
      amount_cents integer NOT NULL, epoch bigint NOT NULL, at timestamptz NOT NULL)`);
    await this.pool.query('CREATE INDEX IF NOT EXISTS lab_charges_order ON lab_charges (order_id)');
    return this;
  }

  async charge(entry: Omit<Charge, 'chargeId' | 'epoch' | 'at'>, fence?: Fence): Promise<Charge> {
    const charge = newCharge(entry, fence);
    const client = (fence?.transaction as PoolClient | undefined) ?? this.pool;
    await client.query(
      'INSERT INTO lab_charges (charge_id, order_id, account, amount_cents, epoch, at) VALUES ($1, $2, $3, $4, $5, $6)',
      [charge.chargeId, charge.orderId, charge.account, charge.amountCents, charge.epoch, charge.at],
    );
    return charge;
  }

  async chargesOf(orderId: string): Promise<Charge[]> {
    const { rows } = await this.pool.query<{ charge_id: string; order_id: string; account: string; amount_cents: number; epoch: string; at: Date }>(
      'SELECT * FROM lab_charges WHERE order_id = $1 ORDER BY at',
      [orderId],
    );
    return rows.map((row) => ({
      chargeId: row.charge_id,
      orderId: row.order_id,
      account: row.account,
      amountCents: row.amount_cents,
      epoch: Number(row.epoch),
      at: row.at.toISOString(),
    }));
  }
}
