/**
 * How many bytes the replays of this process may hold decompressed at once
 * (see `sendReplay`). Each decompression bounds itself, but hundreds of
 * concurrent replays of one small stored answer would each inflate it again:
 * the budget bounds their sum.
 */
export class DecompressionBudget {
  private used = 0;

  constructor(private readonly maxBytes: number) {}

  /**
   * Reserve `bytes`, or `undefined` when they do not fit. The reservation is
   * given back with `resize(0)`; `resize` to the bytes actually decoded keeps
   * only those until the answer is sent.
   */
  take(bytes: number): DecompressionReservation | undefined {
    if (this.used + bytes > this.maxBytes) return undefined;
    this.used += bytes;
    return new DecompressionReservation(bytes, (change) => (this.used += change));
  }
}

/** Bytes of a `DecompressionBudget` one replay holds. */
export class DecompressionReservation {
  constructor(
    private bytes: number,
    private readonly change: (bytes: number) => void,
  ) {}

  /** Hold `bytes` from now on, never more than reserved (so giving back twice is harmless). */
  resize(bytes: number): void {
    const kept = Math.min(bytes, this.bytes);
    this.change(kept - this.bytes);
    this.bytes = kept;
  }
}
