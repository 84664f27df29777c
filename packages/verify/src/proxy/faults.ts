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
  /**
   * Deliver the request to the upstream `copies` more times, sent right after the
   * original so that the upstream has both at once (copies count as attempts).
   */
  | { kind: 'duplicate'; copies: number }
  /**
   * Hold the request until the caller's next attempt arrives (at most `maxMs`), then
   * send both: the caller's retry reaches the upstream while the first attempt is
   * still there, as when a slow first attempt outlives the caller's timeout.
   */
  | { kind: 'hold-for-retry'; maxMs: number }
  /** Answer 503 at once, never forward: a hop that is briefly unavailable. */
  | { kind: 'unavailable' };

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
    case 'hold-for-retry':
      return 'hold for retry';
    case 'unavailable':
      return 'unavailable 503';
    default:
      return fault.kind;
  }
}
