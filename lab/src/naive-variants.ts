import type { IdempotencyModuleOptions } from '@idempotency-chain/idempotency/nest';
import type { NaiveVariant } from './lab-config';

/**
 * The idempotency options with the naive variants the lab switched on:
 * `no-heartbeat` lets a live holder's lease run out, `cache-failures`
 * stores every answer, a transient 503 included. (`plain-ledger` is the
 * ledger's, see `PlainLedger`.)
 */
export function naiveOptions(options: IdempotencyModuleOptions, naive: ReadonlySet<NaiveVariant>): IdempotencyModuleOptions {
  if (!naive.has('no-heartbeat') && !naive.has('cache-failures')) return options;
  return {
    ...options,
    defaults: {
      ...options.defaults,
      ...(naive.has('no-heartbeat') && { heartbeatMs: 0 }),
      ...(naive.has('cache-failures') && { isFinal: () => true }),
    },
  };
}
