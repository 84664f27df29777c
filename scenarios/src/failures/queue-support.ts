import { deleteChargeQueues, redactedUrl, withBrokerChannel } from '@idempotency-chain/api';
import { randomUUID } from 'node:crypto';
import type { Lab } from '../lab-processes';
import type { ScenarioContext, VariantRun } from '../scenario';
import type { LabEvent } from '../timeline';

/** The broker of the queue scenarios: `AMQP_URL`, else a local RabbitMQ with its default user. */
function amqpUrl(): string {
  return process.env.AMQP_URL || 'amqp://guest:guest@127.0.0.1:5672';
}

/** Why the queue scenarios cannot run here (RabbitMQ does not answer), or undefined when they can. */
export async function brokerMissing(url = amqpUrl()): Promise<string | undefined> {
  try {
    await withBrokerChannel(url, async () => undefined, 3000);
    return undefined;
  } catch {
    return `RabbitMQ not reachable at ${redactedUrl(url)} (start one, e.g. \`rabbitmq-server -detached\`, or set AMQP_URL)`;
  }
}

/**
 * The environment of a lab whose orders sends charges to payments over
 * RabbitMQ, on a queue of its own: no run ever consumes another's messages.
 */
export function queueEnv(queue: string): Record<string, string> {
  return { CHARGE_TRANSPORT: 'amqp', AMQP_URL: amqpUrl(), CHARGE_QUEUE: queue };
}

/** Run one variant on its own queue, and delete the queue (and its dead letters) after. */
export async function onOwnQueue(run: (queue: string) => Promise<VariantRun>, context: ScenarioContext): Promise<VariantRun> {
  const queue = `lab.payments.charges.${randomUUID().slice(0, 8)}`;
  try {
    return await run(queue);
  } finally {
    await deleteChargeQueues(amqpUrl(), queue).catch((error: unknown) =>
      context.log(`  could not delete ${queue}: ${(error as Error).message}`),
    );
  }
}

/** One delivery of a message to payments, as its logs tell it. */
export interface Delivery {
  receivedAt: number;
  redelivered: boolean;
  keyHash?: string;
  /** `ack`, `requeue`, `dead-letter`; undefined when the consumer died holding it. */
  settlement?: string;
  settledAt?: number;
  /** The idempotency decision payments made for it: executed, replayed, waited... */
  decision?: string;
  epoch?: number;
}

type MessageEvent = LabEvent & { phase?: string; redelivered?: boolean; settlement?: string };

/**
 * Every delivery payments logged, in order: a `received` line, then the
 * idempotency decision and the `settled` line, unless the process died first
 * (payments handles one message at a time, so the lines of one delivery are
 * never interleaved with another's).
 */
export function deliveriesOf(lab: Lab): Delivery[] {
  const lines = (lab.events as MessageEvent[]).filter(
    (e) => e.service === 'payments' && (e.event === ('message' as LabEvent['event']) || e.event === 'idempotency'),
  );
  const deliveries: Delivery[] = [];
  for (const line of lines) {
    const current = deliveries.at(-1);
    if (line.event === 'idempotency' && current && !current.settlement) {
      current.decision = line.outcome;
      current.epoch = line.epoch ?? current.epoch;
    } else if (line.phase === 'received') {
      deliveries.push({ receivedAt: line.time, redelivered: Boolean(line.redelivered), keyHash: line.keyHash });
    } else if (line.phase === 'settled' && current) {
      current.settlement = line.settlement;
      current.settledAt = line.time;
    }
  }
  return deliveries;
}

/**
 * Draw the queue hop in the timeline: each delivery as an arrow from orders
 * to payments, answered by its settlement, or by nothing when the consumer
 * was killed holding it.
 */
export function drawDeliveries(lab: Lab, deliveries: Delivery[], killedAt?: number): void {
  deliveries.forEach((delivery, index) => {
    const end = delivery.settledAt ?? killedAt ?? delivery.receivedAt;
    const answer = delivery.settlement
      ? { outcome: 'ok', status: `${delivery.settlement}${delivery.decision ? ` (${delivery.decision})` : ''}` }
      : { outcome: 'killed before ack' };
    lab.events.push({
      service: 'orders',
      event: 'attempt',
      time: delivery.receivedAt,
      startedAt: delivery.receivedAt,
      durationMs: end - delivery.receivedAt,
      path: `queue delivery${delivery.redelivered ? ' (redelivered)' : ''}`,
      attempt: index + 1,
      keyHash: delivery.keyHash,
      ...answer,
    });
  });
}
