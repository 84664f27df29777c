import { EventEmitter, once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import type { ClaimRequest, ClaimResult, IdempotencyStore } from '@idempotency-chain/idempotency/store';

/** A record as this store keeps it; `until` ends the lease, the retention, or the memory of a release. */
type Entry =
  | { state: 'in_progress'; owner: string; epoch: number; fingerprint: string; until: number }
  | { state: 'completed'; owner: string; epoch: number; fingerprint: string; until: number; result: string }
  | { state: 'released'; owner: string; epoch: number; until: number };

/**
 * A store written the way a team writes its own, from the public contract
 * only (`IdempotencyStore` and its types): records in a `Map`, leases as
 * deadlines, waiters woken by a completion or a release.
 */
export class MapStore implements IdempotencyStore {
  private readonly entries = new Map<string, Entry>();
  /** The last epoch of every key, kept past its record so epochs only grow. */
  private readonly epochs = new Map<string, number>();
  /** Emits a record's key when it completes or is released: what wakes its waiters. */
  private readonly changes = new EventEmitter().setMaxListeners(0);

  async claim({ recordKey, fingerprint, owner, leaseMs }: ClaimRequest): Promise<ClaimResult> {
    const now = Date.now();
    const entry = this.live(recordKey, now);
    if (entry?.state === 'completed') {
      return { status: 'completed', fingerprint: entry.fingerprint, result: entry.result, remainingMs: entry.until - now };
    }
    if (entry?.state === 'in_progress') {
      if (entry.owner === owner) return { status: 'claimed', epoch: entry.epoch };
      if (this.leaseHeld(entry, now)) return { status: 'in_progress', fingerprint: entry.fingerprint, leaseRemainingMs: entry.until - now };
    }
    const epoch = (this.epochs.get(recordKey) ?? 0) + 1;
    this.epochs.set(recordKey, epoch);
    this.entries.set(recordKey, { state: 'in_progress', owner, epoch, fingerprint, until: now + leaseMs });
    return { status: 'claimed', epoch };
  }

  async complete(recordKey: string, owner: string, result: string, retentionMs: number): Promise<boolean> {
    const entry = this.live(recordKey, Date.now());
    if (entry?.owner !== owner) return false;
    if (entry.state === 'completed') return true;
    if (entry.state !== 'in_progress') return false;
    this.entries.set(recordKey, { ...entry, state: 'completed', result, until: Date.now() + retentionMs });
    this.wake(recordKey);
    return true;
  }

  async release(recordKey: string, owner: string): Promise<boolean> {
    const entry = this.live(recordKey, Date.now());
    if (entry?.owner !== owner || entry.state === 'completed') return false;
    // Remembered for as long as the lease would have lasted: a resent release still answers true.
    if (entry.state === 'in_progress') this.entries.set(recordKey, { state: 'released', owner, epoch: entry.epoch, until: entry.until });
    this.wake(recordKey);
    return true;
  }

  async renew(recordKey: string, owner: string, leaseMs: number): Promise<boolean> {
    const entry = this.live(recordKey, Date.now());
    if (entry?.owner !== owner || entry.state === 'released') return false;
    if (entry.state === 'in_progress') entry.until = Date.now() + leaseMs;
    return true;
  }

  async waitForChange(recordKey: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const over = new AbortController();
    const bound = signal ? AbortSignal.any([signal, over.signal]) : over.signal;
    // The key's next change or the timeout, whichever comes first; an abort rejects both, and the caller looks again anyway.
    await Promise.race([once(this.changes, recordKey, { signal: bound }), delay(timeoutMs, undefined, { signal: bound })]).catch(
      () => undefined,
    );
    over.abort(); // drops the listener or the timer that lost
  }

  async close(): Promise<void> {
    this.entries.clear();
    this.changes.removeAllListeners();
  }

  /** Whether an in-progress record's lease still keeps other owners out. */
  protected leaseHeld(entry: Entry, now: number): boolean {
    return entry.until > now;
  }

  /** The record at `recordKey`, or nothing once its retention (or the memory of its release) is over. */
  private live(recordKey: string, now: number): Entry | undefined {
    const entry = this.entries.get(recordKey);
    if (entry && entry.state !== 'in_progress' && entry.until <= now) {
      this.entries.delete(recordKey);
      return undefined;
    }
    return entry;
  }

  private wake(recordKey: string): void {
    this.changes.emit(recordKey);
  }
}
