import { z } from 'zod';
import { oneOf, parseEnvironment, url } from '../config.js';

/**
 * The queue's variables, validated when `ChargeQueueModule` is built: they
 * live in this folder, so an app that drops it keeps none it would ignore.
 */
const schema = z.object({
  /**
   * How charges arrive besides `POST /charges`: `amqp` also consumes them
   * from `CHARGE_QUEUE` on RabbitMQ, `nats` answers charge requests on NATS
   * (`NATS_URL`).
   */
  CHARGE_TRANSPORT: oneOf(['http', 'amqp', 'nats'], 'http'),
  AMQP_URL: url('amqp:', 'amqps:').default('amqp://guest:guest@127.0.0.1:5672'),
  CHARGE_QUEUE: z
    .string()
    .regex(/^[\w.:-]{1,200}$/, { error: 'a name of 1 to 200 letters, digits, dots, colons, dashes or underscores' })
    .default('payments.charges'),
  NATS_URL: url('nats:', 'tls:').default('nats://127.0.0.1:4222'),
});

/** The queue's validated configuration. */
export type QueueConfig = z.output<typeof schema>;

/** A broker URL may carry its password: named in a message, never shown. */
const SECRETS: ReadonlySet<string> = new Set(['AMQP_URL', 'NATS_URL']);

/**
 * The queue's configuration from `env`.
 *
 * @throws ConfigError naming the first bad variable.
 */
export function validateQueueConfig(env: Record<string, unknown>): QueueConfig {
  return parseEnvironment(schema, SECRETS, env);
}
