import { ledgerUnavailable, newCharge, type Charge, type ChargeEntry, type Fence, type Ledger } from '@idempotency-chain/payments';
import type { OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { ReplyError, type Redis } from 'ioredis';
import { connectRedis } from '../unreachable';
import { StaleWriteError } from './stale-write';

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

/**
 * The lab's ledger on Redis (`IDEMPOTENCY_STORE=redis`, on `LEDGER_REDIS_URL`
 * when set): it survives a restart of the payments process. What it
 * keeps per record (the newest epoch, the record's charge) expires with the
 * record's retention (`fenceTtlMs`). A command Redis did not answer is
 * `ledgerUnavailable` (503); one it refused (a `ReplyError`: the script
 * failed) is a bug, thrown as it is.
 */
export class RedisLedger implements Ledger, OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly redis: Redis,
    private readonly fenceTtlMs: number,
    private readonly prefix = 'payments:ledger:',
    /** Connect `redis` at boot (created with `lazyConnect`) and quit it on shutdown. */
    private readonly ownsClient = false,
  ) {}

  /** Connect the client it owns; a Redis that does not answer fails the boot, naming it. */
  async onModuleInit(): Promise<void> {
    if (this.ownsClient && this.redis.status === 'wait') await connectRedis(this.redis);
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.ownsClient) await this.redis.quit().catch(() => this.redis.disconnect());
  }

  async charge(entry: ChargeEntry, fence?: Fence): Promise<Charge> {
    const charge = newCharge(entry, fence);
    const written = await answered(
      this.redis.eval(
        CHARGE_SCRIPT,
        3,
        fence ? `${this.prefix}fence:{${fence.recordKey}}` : '',
        fence ? `${this.prefix}charge:{${fence.recordKey}}` : '',
        this.chargesKey(entry.orderId),
        String(charge.epoch),
        JSON.stringify(charge),
        String(this.fenceTtlMs),
      ),
    );
    if (written === 0) throw new StaleWriteError();
    return typeof written === 'string' ? (JSON.parse(written) as Charge) : charge;
  }

  async chargesOf(orderId: string): Promise<Charge[]> {
    const lines = await answered(this.redis.lrange(this.chargesKey(orderId), 0, -1));
    return lines.map((line) => JSON.parse(line) as Charge);
  }

  private chargesKey(orderId: string): string {
    return `${this.prefix}charges:${encodeURIComponent(orderId)}`;
  }
}

/**
 * Redis's own refusals that mean "not now" and ran nothing: a replica (a
 * failover in progress), a server still loading its data, a script running
 * past its time limit, a cluster without a master for the slot.
 */
const NOT_NOW = /^(READONLY|LOADING|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN) /;

/**
 * `command`'s reply, or `ledgerUnavailable` (503: retry with the same key)
 * when Redis did not answer - ioredis's "Connection is closed.", "Command
 * timed out", a refused connection, the offline queue's refusal: the write
 * may or may not have happened - or answered "not now". Any other error
 * reply is Redis's verdict on the command, and is thrown as it is.
 */
async function answered<T>(command: Promise<T>): Promise<T> {
  try {
    return await command;
  } catch (error) {
    const verdict = error instanceof ReplyError && !NOT_NOW.test((error as Error).message);
    throw verdict ? error : ledgerUnavailable(error);
  }
}
