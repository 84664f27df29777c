import { environmentReader } from './environment';

/** The write-up's four policies: which idempotency the lab demonstrates. */
export const KEY_POLICIES = ['none', 'per-attempt', 'propagated', 'fingerprint'] as const;
export type LabKeyPolicy = (typeof KEY_POLICIES)[number];

/**
 * The naive variants the lab can switch on, one mechanism at a time, to show
 * what each one prevents: caching transient failures, running without the
 * heartbeat, writing the ledger without its key and fence.
 */
export const NAIVE_VARIANTS = ['cache-failures', 'no-heartbeat', 'plain-ledger'] as const;
export type NaiveVariant = (typeof NAIVE_VARIANTS)[number];

/** What the lab changes in a service it runs, read from the environment like the service's own configuration. */
export interface LabConfig {
  /** `KEY_POLICY` (default `propagated`: the services as they are). */
  keyPolicy: LabKeyPolicy;
  /** `LAB_NAIVE=a,b` (default none). */
  naive: ReadonlySet<NaiveVariant>;
  /**
   * `CHARGE_TRANSPORT`: which of orders' modules the lab runs, `OrdersModule`
   * (`http`, default), `QueuedOrdersModule` (`amqp`) or `NatsOrdersModule` (`nats`).
   */
  chargeTransport: 'http' | 'amqp' | 'nats';
  /**
   * `LEDGER_REDIS_URL`: where the lab keeps payments' ledger when it runs
   * payments on Redis (default: the records' `REDIS_URL`), so that an outage
   * of the records' Redis can leave the ledger up, or the other way round.
   */
  ledgerRedisUrl: string | undefined;
}

/** Read and validate the lab's settings from `env`; throws `ConfigError` naming a bad variable. */
export function loadLabConfig(env: NodeJS.ProcessEnv = process.env): LabConfig {
  const read = environmentReader(env);
  const ledgerRedisUrl = read.string('LEDGER_REDIS_URL', '') || undefined;
  return {
    keyPolicy: read.oneOf('KEY_POLICY', KEY_POLICIES, 'propagated'),
    naive: new Set(read.list('LAB_NAIVE', NAIVE_VARIANTS)),
    chargeTransport: read.oneOf('CHARGE_TRANSPORT', ['http', 'amqp', 'nats'], 'http'),
    ledgerRedisUrl: ledgerRedisUrl && read.url('LEDGER_REDIS_URL', ledgerRedisUrl, ['redis:', 'rediss:']),
  };
}
