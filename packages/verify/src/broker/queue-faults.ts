/**
 * What the queue proxy does to one delivery (counted from 1 per scenario, redeliveries
 * and copies included).
 */
export type QueueFault =
  /**
   * Let the consumer handle the delivery, then cut its connection when its ack arrives,
   * before the ack reaches the broker: the effect landed, the broker redelivers.
   */
  | { kind: 'lose-ack' }
  /**
   * Publish a copy of the delivered message into the consumer's queue at once (while the
   * consumer still holds the original) and another once the original was acked.
   */
  | { kind: 'duplicate-delivery' }
  /**
   * Hold the consumer's ack and run `crash` (which kills the consumer's service and starts
   * it again) before it reaches the broker: the consumer dies between its effect and its ack.
   */
  | { kind: 'kill-before-ack'; crash: () => Promise<void> };

/** Faults per delivery number (1-based, counted since the plan was set). */
export type QueuePlan = ReadonlyMap<number, readonly QueueFault[]>;

/** A short label for a queue fault, as reports and diagrams show it. */
export function queueFaultLabel(fault: QueueFault): string {
  return fault.kind.replace(/-/g, ' ');
}
