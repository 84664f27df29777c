import { positiveMs } from './milliseconds';

/** How long an answer is replayed from memory by default before the store is asked again. */
const DEFAULT_MAX_AGE_MS = 60_000;

/**
 * Bounds of the replay cache: the answers this process keeps in memory.
 *
 * @public
 */
export interface ReplayCacheOptions {
  /** Records kept at most. Default 10,000. */
  maxEntries?: number;
  /**
   * Characters kept at most: of the records' names and fingerprints as well
   * as of their results, so that no part of an entry escapes the bound (the
   * coordinator names a record by its 64-character record key, never by
   * the scope and key a request brought). Default 16 Mi.
   */
  maxChars?: number;
  /**
   * How long an answer is replayed from memory before the store is asked
   * again, in milliseconds. Default 60 s. A completed record changes only
   * when an operator force-releases it (`releaseRecord` with `force`):
   * this bounds how long a process goes on replaying the deleted answer,
   * at the cost of one store round trip per record this often.
   */
  maxAgeMs?: number;
}

/** How long an answer is replayed: a little less than the store keeps it (a tenth of that, a second at most). */
function untilStoreEnd(remainingMs: number): number {
  return remainingMs - Math.min(1_000, remainingMs / 10);
}

interface Entry {
  /** Characters this entry keeps: its name, fingerprint and result. */
  chars: number;
  fingerprint: string;
  result: string;
  /** `performance.now()` past which the entry is not used. */
  expiresAt: number;
}

/**
 * The completed records this process has replayed, so their next replays
 * need no round trip to the store. A record enters on its first replay, not
 * on its completion: most keys are never retried, and remembering every
 * answer would cost each first execution a write here and keep every
 * result in memory. Safe because a completed record never changes:
 * nothing but the end of its retention removes it (a release and a
 * takeover only ever touch a record in progress), or an operator's forced
 * release, which no process hears of. Each entry is dropped a little
 * before the record's own expiry (a tenth of what is left, a second at
 * most), so a replay from memory is never one the store would no longer
 * give, and after `maxAgeMs` at the latest, so a forced release reaches
 * every process within it; an answer the store never took is the exception
 * (`setUnstored`). Bounded by count and by size, names included;
 * the oldest entries go first.
 */
export class ReplayCache {
  private readonly entries = new Map<string, Entry>();
  private kept = 0;
  private readonly maxEntries: number;
  private readonly maxChars: number;
  private readonly maxAgeMs: number;

  constructor(options: ReplayCacheOptions = {}) {
    this.maxEntries = options.maxEntries ?? 10_000;
    this.maxChars = options.maxChars ?? 16 * 1024 * 1024;
    this.maxAgeMs = positiveMs('replayCache.maxAgeMs', options.maxAgeMs ?? DEFAULT_MAX_AGE_MS);
  }

  /** Characters kept now: names, fingerprints and results (what `maxChars` bounds). */
  get chars(): number {
    return this.kept;
  }

  /** The record named `record` (its record key), while it is known to be completed. */
  get(record: string): { fingerprint: string; result: string } | undefined {
    const entry = this.entries.get(record);
    if (!entry) return undefined;
    if (entry.expiresAt > performance.now()) return entry;
    this.delete(record, entry);
    return undefined;
  }

  /** Remember a completed record that the store keeps for `remainingMs` more. */
  set(record: string, fingerprint: string, result: string, remainingMs: number): void {
    this.keep(record, fingerprint, result, Math.min(untilStoreEnd(remainingMs), this.maxAgeMs));
  }

  /**
   * Remember an answer the store could not take (its `complete` failed), for
   * the `retentionMs` its record would have been kept. Not capped by
   * `maxAgeMs`: that bound lets the store be asked again, but the store has
   * nothing to give here. Once this entry went, the key would be free in the
   * store and a retry would run the action a second time.
   */
  setUnstored(record: string, fingerprint: string, result: string, retentionMs: number): void {
    this.keep(record, fingerprint, result, untilStoreEnd(retentionMs));
  }

  private keep(record: string, fingerprint: string, result: string, keepMs: number): void {
    const chars = record.length + fingerprint.length + result.length;
    if (!(keepMs > 0) || chars > this.maxChars) return;
    const previous = this.entries.get(record);
    if (previous) this.delete(record, previous);
    this.entries.set(record, { chars, fingerprint, result, expiresAt: performance.now() + keepMs });
    this.kept += chars;
    if (this.entries.size <= this.maxEntries && this.kept <= this.maxChars) return;
    for (const [key, entry] of this.entries) {
      this.delete(key, entry);
      if (this.entries.size <= this.maxEntries && this.kept <= this.maxChars) return;
    }
  }

  private delete(record: string, entry: Entry): void {
    this.entries.delete(record);
    this.kept -= entry.chars;
  }
}
