/**
 * The requests of one coordinator that wait for another execution, counted
 * per record and in all, so that neither a retry storm on one key nor
 * duplicates spread over many can hold requests without bound.
 */
export class WaitingRequests {
  private readonly perKey = new Map<string, number>();
  private total = 0;

  constructor(private readonly maxTotal: number) {}

  /** Count one more request waiting on `recordKey`; `false`, counting nothing, when a cap is reached. */
  enter(recordKey: string, maxPerKey: number): boolean {
    const waiting = this.perKey.get(recordKey) ?? 0;
    if (waiting >= maxPerKey || this.total >= this.maxTotal) return false;
    this.perKey.set(recordKey, waiting + 1);
    this.total += 1;
    return true;
  }

  /** Count one request on `recordKey` as no longer waiting. */
  leave(recordKey: string): void {
    const waiting = this.perKey.get(recordKey) ?? 0;
    if (waiting <= 1) this.perKey.delete(recordKey);
    else this.perKey.set(recordKey, waiting - 1);
    this.total -= 1;
  }
}
