/**
 * What a fault proxy does to one attempt. Several may apply to the same attempt
 * (the write-up's slow first attempt is `hold` and `lose-reply` together).
 */
export type Fault =
  /** Wait before forwarding, so the upstream does the work after the caller gave up. */
  | { kind: 'hold'; ms: number }
  /** Forward, read the whole upstream answer, then reset the caller's connection. */
  | { kind: 'lose-reply' }
  /** Reset the caller's connection as soon as the request head arrived; the upstream never sees it. */
  | { kind: 'reset' }
  /** Forward at once but deliver the answer late. */
  | { kind: 'latency'; ms: number }
  /**
   * Forward, read the whole answer, then run `crash` (which kills the upstream's
   * service and starts it again) before resetting the caller's connection: the
   * service dies after its effect and before anyone got its answer.
   */
  | { kind: 'kill'; crash: () => Promise<void> }
  /** Deliver the request to the upstream `copies` more times, side by side with the original. */
  | { kind: 'duplicate'; copies: number };

/** Faults per attempt number (1-based, counted per hop since the plan was set). */
export type FaultPlan = ReadonlyMap<number, readonly Fault[]>;

/** A short, whole label for a fault, as reports and diagrams show it. */
export function faultLabel(fault: Fault): string {
  switch (fault.kind) {
    case 'hold':
      return `hold ${fault.ms}ms`;
    case 'latency':
      return `latency ${fault.ms}ms`;
    case 'duplicate':
      return `duplicate x${fault.copies}`;
    default:
      return fault.kind;
  }
}
