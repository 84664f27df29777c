import { holderState } from './holder-liveness';
import { positiveMs } from './milliseconds';
import {
  RecordStatus,
  type ClaimRequest,
  type ClaimResult,
  type InspectableStore,
  type OperatorReleaseResult,
  type StoredRecord,
} from './store';

interface MemoryRecord {
  status: RecordStatus;
  fingerprint: string;
  owner: string;
  epoch: number;
  /** Lease end while in progress; retention end once completed (epoch ms). */
  expiresAt: number;
  /** When the holder claimed or last renewed the lease (epoch ms). */
  renewedAt: number;
  /** The holder's heartbeat interval as its claim gave it; `undefined` when it did not. */
  heartbeatMs?: number;
  result?: string;
}

/**
 * Options of the in-memory store.
 *
 * @public
 */
export interface MemoryStoreOptions {
  /** How often expired records are swept out, in milliseconds. Default 5 s. */
  sweepIntervalMs?: number;
}

/**
 * A store for one process: records live in a `Map`, every operation runs
 * without an `await` between its read and its write, so it is atomic against
 * every other request of this process. Not shared between replicas - use
 * `RedisStore` when more than one process serves the same keys.
 *
 * Memory is bounded by retention: expired records are ignored at once and
 * swept out every `sweepIntervalMs`.
 *
 * @example
 * const store = new MemoryStore();
 * const idempotency = new IdempotencyCoordinator({ service: 'payments', store });
 *
 * @public
 */
export class MemoryStore implements InspectableStore {
  private readonly records = new Map<string, MemoryRecord>();
  private readonly waiters = new Map<string, Set<() => void>>();
  /**
   * Who released each key, until the lease it released would have ended:
   * what tells a release resent by its owner from one by a stranger.
   */
  private readonly releasedBy = new Map<string, { owner: string; expiresAt: number }>();
  private readonly sweeper: NodeJS.Timeout;
  /** Epochs are seeded from the clock, so they grow even across expiry. */
  private lastEpoch = 0;

  constructor(options: MemoryStoreOptions = {}) {
    this.sweeper = setInterval(() => this.sweep(), options.sweepIntervalMs ?? 5000);
    this.sweeper.unref();
  }

  /** Number of records held, expired or not (for tests and benchmarks). */
  get size(): number {
    return this.records.size;
  }

  async claim({ recordKey, fingerprint, owner, leaseMs, heartbeatMs }: ClaimRequest): Promise<ClaimResult> {
    const lease = positiveMs('leaseMs', leaseMs);
    const now = Date.now();
    const record = this.live(recordKey, now);
    if (record?.status === RecordStatus.Completed) {
      return { status: 'completed', fingerprint: record.fingerprint, result: record.result as string, remainingMs: record.expiresAt - now };
    }
    // The same owner's claim arriving twice (a resend) is answered as the first one was.
    if (record?.owner === owner) return { status: 'claimed', epoch: record.epoch };
    if (record) {
      return { status: 'in_progress', fingerprint: record.fingerprint, leaseRemainingMs: record.expiresAt - now };
    }
    this.releasedBy.delete(recordKey);
    this.lastEpoch = Math.max(this.lastEpoch + 1, now);
    const epoch = this.lastEpoch;
    this.records.set(recordKey, {
      status: RecordStatus.InProgress,
      fingerprint,
      owner,
      epoch,
      expiresAt: now + lease,
      renewedAt: now,
      ...(heartbeatMs !== undefined && { heartbeatMs }),
    });
    return { status: 'claimed', epoch };
  }

  async complete(recordKey: string, owner: string, result: string, retentionMs: number): Promise<boolean> {
    const retention = positiveMs('retentionMs', retentionMs);
    const record = this.held(recordKey, owner);
    if (!record) return this.completedBy(recordKey, owner);
    Object.assign(record, { status: RecordStatus.Completed, result, expiresAt: Date.now() + retention });
    this.wake(recordKey);
    return true;
  }

  async release(recordKey: string, owner: string): Promise<boolean> {
    const record = this.held(recordKey, owner);
    if (!record) {
      const released = this.releasedBy.get(recordKey);
      // A claim since would have forgotten it: the key is still free.
      return released?.owner === owner && released.expiresAt > Date.now();
    }
    this.records.delete(recordKey);
    this.releasedBy.set(recordKey, { owner, expiresAt: record.expiresAt });
    this.wake(recordKey);
    return true;
  }

  async renew(recordKey: string, owner: string, leaseMs: number): Promise<boolean> {
    const lease = positiveMs('leaseMs', leaseMs);
    const record = this.held(recordKey, owner);
    if (!record) return this.completedBy(recordKey, owner);
    const now = Date.now();
    Object.assign(record, { expiresAt: now + lease, renewedAt: now });
    return true;
  }

  /** The live record at `recordKey` (see `InspectableStore`). */
  async inspect(recordKey: string): Promise<StoredRecord | undefined> {
    const now = Date.now();
    const record = this.live(recordKey, now);
    if (!record) return undefined;
    const { status, epoch, fingerprint, result, heartbeatMs } = record;
    const inProgress = status === RecordStatus.InProgress;
    return {
      status,
      epoch,
      ownerPresent: record.owner !== '',
      remainingMs: record.expiresAt - now,
      fingerprint,
      ...(inProgress && { lastRenewalMsAgo: now - record.renewedAt }),
      ...(inProgress && heartbeatMs !== undefined && { heartbeatMs }),
      ...(result !== undefined && { result }),
    };
  }

  /** End the record whoever holds it; the next claim's epoch exceeds the one left behind (see `InspectableStore`). */
  async releaseByOperator(recordKey: string, { force }: { force: boolean }): Promise<OperatorReleaseResult> {
    const now = Date.now();
    const record = this.live(recordKey, now);
    if (!record) return { outcome: 'absent' };
    const epochBefore = record.epoch;
    const completed = record.status === RecordStatus.Completed;
    if (completed && !force) return { outcome: 'refused_completed', epochBefore };
    const alive = !completed && holderState(now - record.renewedAt, record.heartbeatMs) === 'alive';
    if (alive && !force) return { outcome: 'refused_holder_alive', epochBefore, lastRenewalMsAgo: now - record.renewedAt };
    // The next claim's epoch exceeds epochAfter, which nobody holds; no owner's resend is recognised any more.
    const epochAfter = epochBefore + 1;
    this.lastEpoch = Math.max(this.lastEpoch, epochAfter);
    this.records.delete(recordKey);
    this.releasedBy.delete(recordKey);
    this.wake(recordKey);
    return { outcome: completed ? 'forced' : alive ? 'forced_holder_alive' : 'released', epochBefore, epochAfter };
  }

  waitForChange(recordKey: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.live(recordKey, Date.now())?.status !== RecordStatus.InProgress || signal?.aborted) {
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const waiters = this.waiters.get(recordKey) ?? new Set();
      this.waiters.set(recordKey, waiters);
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        waiters.delete(done);
        if (waiters.size === 0 && this.waiters.get(recordKey) === waiters) this.waiters.delete(recordKey);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      signal?.addEventListener('abort', done, { once: true });
      waiters.add(done);
    });
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    for (const key of [...this.waiters.keys()]) this.wake(key);
  }

  /** The record at `recordKey` unless its lease or retention has run out. */
  private live(recordKey: string, now: number): MemoryRecord | undefined {
    const record = this.records.get(recordKey);
    if (record && record.expiresAt <= now) {
      this.records.delete(recordKey);
      return undefined;
    }
    return record;
  }

  /** The record if `owner` still holds its live lease. */
  private held(recordKey: string, owner: string): MemoryRecord | undefined {
    const record = this.live(recordKey, Date.now());
    return record?.status === RecordStatus.InProgress && record.owner === owner ? record : undefined;
  }

  /** Whether `owner` completed the live record: its own completion, or renewal, arriving again. */
  private completedBy(recordKey: string, owner: string): boolean {
    const record = this.live(recordKey, Date.now());
    return record?.status === RecordStatus.Completed && record.owner === owner;
  }

  private wake(recordKey: string): void {
    for (const waiter of [...(this.waiters.get(recordKey) ?? [])]) waiter();
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, record] of this.records) if (record.expiresAt <= now) this.records.delete(key);
    for (const [key, released] of this.releasedBy) if (released.expiresAt <= now) this.releasedBy.delete(key);
  }
}
