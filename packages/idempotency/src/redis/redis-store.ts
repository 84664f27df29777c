import type { Redis } from 'ioredis';
import { RecordStatus, type ClaimRequest, type ClaimResult, type IdempotencyStore } from '../store';
import { CompletionChannels } from './completion-channels';
import { closeConnection } from './redis-client';
import { CLAIM_SCRIPT, COMPLETE_SCRIPT, RELEASE_SCRIPT, RENEW_SCRIPT } from './scripts';

/** Options of {@link RedisStore}. */
export interface RedisStoreOptions {
  /**
   * The connection the store runs its scripts on. Configure it to fail fast
   * (`FAIL_FAST_REDIS_OPTIONS`, or `createRedisClient`): a store
   * call must reject while Redis is down, not wait for it to come back.
   */
  client: Redis;
  /** Prepended to every key and channel name. Default `idem:`. */
  prefix?: string;
  /**
   * While waiting, how often the record is re-read in case it left
   * `in_progress` without a message (a lease that ran out silently, a
   * message lost while the subscriber reconnected). Default 1000 ms.
   */
  pollIntervalMs?: number;
  /** Whether `close()` also quits `client`. Default `false`. */
  ownsClient?: boolean;
}

/**
 * How long the epoch counter lives after a claim (or the lease, if longer).
 * While it lives, the counter orders claims made within one millisecond or
 * after the server clock stepped back; by the time it expires, the clock has
 * long passed every epoch it issued, and seeds the next one.
 */
const EPOCH_TTL_FLOOR_MS = 24 * 60 * 60 * 1000;
/** Longest delay `setTimeout` honours; longer ones fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The client once the scripts are defined on it; every argument is a key or a string. */
type ScriptedRedis = Redis & {
  idempotencyClaim(record: string, epoch: string, fp: string, owner: string, leaseMs: string, epochTtlMs: string): Promise<unknown>;
  idempotencyComplete(record: string, owner: string, result: string, retentionMs: string, channel: string): Promise<unknown>;
  idempotencyRelease(record: string, owner: string, channel: string): Promise<unknown>;
  idempotencyRenew(record: string, owner: string, leaseMs: string): Promise<unknown>;
};

/**
 * A store shared by every replica of a service, in Redis. Each operation is
 * one Lua script, sent as EVALSHA with a transparent EVAL fallback
 * (`defineCommand`), so each is one atomic round trip. All of one record's
 * keys share a hash tag, so they live in one Cluster slot and the scripts
 * stay legal there.
 *
 * Key layout, for a `storeKey` that is already a hash (no user text):
 * - `<prefix>{<storeKey>}`: the record hash. Its TTL is the lease while in
 *   progress, so a crashed holder's claim vanishes after one lease, and the
 *   retention once completed.
 * - `<prefix>{<storeKey>}:epoch`: the fencing counter.
 * - `<prefix>{<storeKey>}:done`: the channel completion and release publish on.
 *
 * Waiters share one subscriber connection, created with `client.duplicate()`
 * on the first wait and always closed by `close()`.
 *
 * ```text
 * waiter:  SUBSCRIBE :done --ok--> HGET status --in_progress--> wait for message
 * holder:                  complete: HSET + PUBLISH (one script)
 * ```
 * The record is read only after the subscription is confirmed, so a
 * completion lands either before the read (seen by it) or after the
 * subscription (delivered to it): never in between, unseen.
 *
 * @example
 * import { RedisStore, createRedisClient } from '@idempotency-chain/idempotency/redis';
 *
 * const client = createRedisClient(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
 * await client.connect();
 * const store = new RedisStore({ client, ownsClient: true });
 * const idempotency = new IdempotencyCoordinator({ service: 'payments', store });
 * // on shutdown
 * await store.close();
 */
export class RedisStore implements IdempotencyStore {
  private readonly client: ScriptedRedis;
  private readonly prefix: string;
  private readonly pollIntervalMs: number;
  private readonly ownsClient: boolean;
  private readonly channels: CompletionChannels;
  /** Settles each pending wait; `close()` resolves them all. */
  private readonly waiters = new Set<(error?: unknown) => void>();
  private closed = false;

  constructor(options: RedisStoreOptions) {
    this.prefix = options.prefix ?? 'idem:';
    // A brace in the prefix would become the hash tag and split a record's keys across slots.
    if (/[{}]/.test(this.prefix)) throw new RangeError('RedisStore prefix must not contain { or }');
    this.pollIntervalMs = positiveMs('pollIntervalMs', options.pollIntervalMs ?? 1000);
    this.ownsClient = options.ownsClient ?? false;
    const client = options.client;
    client.defineCommand('idempotencyClaim', { lua: CLAIM_SCRIPT, numberOfKeys: 2 });
    client.defineCommand('idempotencyComplete', { lua: COMPLETE_SCRIPT, numberOfKeys: 1 });
    client.defineCommand('idempotencyRelease', { lua: RELEASE_SCRIPT, numberOfKeys: 1 });
    client.defineCommand('idempotencyRenew', { lua: RENEW_SCRIPT, numberOfKeys: 1 });
    this.client = client as ScriptedRedis;
    this.channels = new CompletionChannels(() => client.duplicate({ lazyConnect: true }));
  }

  async claim({ storeKey, fingerprint, owner, leaseMs }: ClaimRequest): Promise<ClaimResult> {
    const keys = this.keys(storeKey);
    const lease = positiveMs('leaseMs', leaseMs);
    const epochTtl = String(Math.max(lease, EPOCH_TTL_FLOOR_MS));
    const reply = await this.client.idempotencyClaim(keys.record, keys.epoch, fingerprint, owner, String(lease), epochTtl);
    return toClaimResult(reply);
  }

  async complete(storeKey: string, owner: string, result: string, retentionMs: number): Promise<boolean> {
    const { record, channel } = this.keys(storeKey);
    const retention = String(positiveMs('retentionMs', retentionMs));
    return (await this.client.idempotencyComplete(record, owner, result, retention, channel)) === 1;
  }

  async release(storeKey: string, owner: string): Promise<boolean> {
    const { record, channel } = this.keys(storeKey);
    return (await this.client.idempotencyRelease(record, owner, channel)) === 1;
  }

  async renew(storeKey: string, owner: string, leaseMs: number): Promise<boolean> {
    const { record } = this.keys(storeKey);
    return (await this.client.idempotencyRenew(record, owner, String(positiveMs('leaseMs', leaseMs)))) === 1;
  }

  async waitForChange(storeKey: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const { record, channel } = this.keys(storeKey);
    if (signal?.aborted || !(timeoutMs > 0)) return;
    return new Promise<void>((resolve, reject) => {
      let poll: NodeJS.Timeout | undefined;
      const settle = (error?: unknown): void => {
        if (!this.waiters.delete(settle)) return;
        clearTimeout(deadline);
        clearTimeout(poll);
        signal?.removeEventListener('abort', onWake);
        this.channels.leave(channel, onWake);
        if (error === undefined) resolve();
        else reject(error);
      };
      const onWake = (): void => settle();
      const recheck = async (): Promise<void> => {
        if (!this.waiters.has(settle)) return;
        if ((await this.client.hget(record, 'status')) !== RecordStatus.InProgress) return settle();
        if (this.waiters.has(settle)) poll = setTimeout(() => recheck().catch(settle), this.pollIntervalMs);
      };
      const deadline = setTimeout(onWake, Math.min(timeoutMs, MAX_TIMER_MS));
      this.waiters.add(settle);
      signal?.addEventListener('abort', onWake, { once: true });
      this.channels.join(channel, onWake).then(recheck).catch(settle);
    });
  }

  /** Resolve pending waits, close the subscriber, and quit `client` if owned. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const settle of [...this.waiters]) settle();
    await this.channels.close();
    if (this.ownsClient) await closeConnection(this.client);
  }

  private keys(storeKey: string): { record: string; epoch: string; channel: string } {
    if (this.closed) throw new Error('RedisStore is closed');
    // The store key must not end the hash tag early; it is a hash, so this never trips in use.
    if (storeKey.length === 0 || /[{}]/.test(storeKey)) throw new RangeError('Invalid store key');
    const record = `${this.prefix}{${storeKey}}`;
    return { record, epoch: `${record}:epoch`, channel: `${record}:done` };
  }
}

function positiveMs(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number of milliseconds`);
  return Math.ceil(value);
}

function toClaimResult(reply: unknown): ClaimResult {
  const [status, first, second] = Array.isArray(reply) ? (reply as unknown[]) : [];
  if (status === 'claimed' && Number.isSafeInteger(Number(first))) return { status, epoch: Number(first) };
  if (status === 'in_progress') return { status, fingerprint: String(first ?? ''), leaseRemainingMs: Number(second) };
  if (status === 'completed') return { status, fingerprint: String(first ?? ''), result: String(second ?? '') };
  throw new Error('Unexpected reply from the idempotency claim script');
}
