import type { QueueHopConfig } from '../config/schema';
import type { AttemptLog } from '../proxy/attempt-log';
import { AmqpProxy } from './amqp-proxy';
import { NatsProxy } from './nats-proxy';
import type { QueuePlan } from './queue-faults';

/** What the runner asks of a queue hop's proxy, whichever broker it reads. */
export interface QueueProxy {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Faults per delivery number for the scenario that starts. */
  setPlan(plan: QueuePlan): void;
  /** Messages that may still reach the consumer or wait for its answer: the chain has not settled while any does. */
  waiting(): Promise<number>;
  /** What went wrong in the proxy during the scenario: reported as its error. */
  problems: string[];
  /** Messages the broker gave up on during the scenario without the consumer's answer (JetStream's `max_deliver`). */
  dropped: string[];
}

/** The proxy for a queue hop: AMQP 0-9-1 for an `amqp://` broker, NATS for a `nats://` one. */
export function queueProxyFor(queue: QueueHopConfig, log: AttemptLog): QueueProxy {
  const [host, port] = queue.listen.includes(':') ? queue.listen.split(':') : ['127.0.0.1', queue.listen];
  const where = { name: queue.name, host: host as string, port: Number(port), keyHeader: queue.keyHeader, log };
  if (queue.broker.startsWith('nats:')) {
    return new NatsProxy({ ...where, server: queue.broker, stream: queue.stream as string, consumer: queue.consumer as string });
  }
  return new AmqpProxy({ ...where, broker: queue.broker, queue: queue.queue as string });
}

/** What the consumer reads, in words: `queue charges`, or `stream CHARGES (consumer payments)`. */
export function queueSource(queue: QueueHopConfig): string {
  return queue.stream === undefined ? `queue ${queue.queue}` : `stream ${queue.stream} (consumer ${queue.consumer})`;
}
