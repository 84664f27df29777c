import { SERVICE_CONFIG, STORE, type ServiceConfig, type StoreBinding } from '@idempotency-chain/lab-service';
import type { Provider } from '@nestjs/common';
import { MemoryLedger, RedisLedger } from './ledger';

/** Injection token of the ledger. */
export const LEDGER = Symbol('LEDGER');

/** The ledger lives beside the idempotency records: in Redis when they are. */
export const ledgerProvider: Provider = {
  provide: LEDGER,
  useFactory: (config: ServiceConfig, binding: StoreBinding) =>
    binding.redis ? new RedisLedger(binding.redis, config.retentionMs) : new MemoryLedger(),
  inject: [SERVICE_CONFIG, STORE],
};
