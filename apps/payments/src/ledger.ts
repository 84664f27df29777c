import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

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
}

/** A write refused because a newer execution of the same record already wrote. */
export class StaleWriteError extends Error {
  override name = 'StaleWriteError';
}

/**
 * The payments ledger, the lab's ground truth. A write carrying a fence is
 * refused when an execution with a newer epoch for the same record has been
 * seen: a holder that lost its lease cannot charge after its successor.
 */
export interface Ledger {
  charge(entry: Omit<Charge, 'chargeId' | 'epoch' | 'at'>, fence?: Fence): Promise<Charge>;
  chargesOf(orderId: string): Promise<Charge[]>;
}

function newCharge(entry: Omit<Charge, 'chargeId' | 'epoch' | 'at'>, fence?: Fence): Charge {
  return { chargeId: `ch_${randomUUID()}`, ...entry, epoch: fence?.epoch ?? 0, at: new Date().toISOString() };
}

/** A ledger in this process: lost with it. */
export class MemoryLedger implements Ledger {
  private readonly charges = new Map<string, Charge[]>();
  private readonly fences = new Map<string, number>();

  async charge(entry: Omit<Charge, 'chargeId' | 'epoch' | 'at'>, fence?: Fence): Promise<Charge> {
    if (fence) {
      if ((this.fences.get(fence.recordKey) ?? 0) > fence.epoch) throw new StaleWriteError('stale fencing epoch');
      this.fences.set(fence.recordKey, fence.epoch);
    }
    const charge = newCharge(entry, fence);
    this.charges.set(entry.orderId, [...(this.charges.get(entry.orderId) ?? []), charge]);
    return charge;
  }

  async chargesOf(orderId: string): Promise<Charge[]> {
    return this.charges.get(orderId) ?? [];
  }
}

/**
 * Check the fence and append the charge in one step: the refusal and the
 * write cannot interleave with another writer's.
 * KEYS[1] fence, KEYS[2] the order's charges; ARGV: epoch, charge JSON, fence TTL ms.
 */
const CHARGE_SCRIPT = `
if KEYS[1] ~= '' then
  local seen = tonumber(redis.call('GET', KEYS[1]) or '0')
  if seen > tonumber(ARGV[1]) then return 0 end
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
end
redis.call('RPUSH', KEYS[2], ARGV[2])
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
      2,
      fence ? `${this.prefix}fence:${fence.recordKey}` : '',
      this.chargesKey(entry.orderId),
      String(charge.epoch),
      JSON.stringify(charge),
      String(this.fenceTtlMs),
    );
    if (written !== 1) throw new StaleWriteError('stale fencing epoch');
    return charge;
  }

  async chargesOf(orderId: string): Promise<Charge[]> {
    const lines = await this.redis.lrange(this.chargesKey(orderId), 0, -1);
    return lines.map((line) => JSON.parse(line) as Charge);
  }

  private chargesKey(orderId: string): string {
    return `${this.prefix}charges:${encodeURIComponent(orderId)}`;
  }
}
