/**
 * payments' public module, the start of its queue consumer, and the
 * ledger's contract (its token, its types, what a ledger throws, at boot
 * too), by which the lab decorates payments' ledger or replaces it. `./main`
 * starts it as a process.
 */
export { CHARGE_PATTERN, chargeQueueOptions, deadLetterQueue } from './charge-queue';
export { consumeChargesWhenQueued } from './charges.transport';
export { ConfigError } from './config';
export { LEDGER } from './ledger.provider';
export { ledgerUnavailable, newCharge, StaleWriteError } from './ledger';
export type { Charge, ChargeEntry, Fence, Ledger } from './ledger';
export type { Delivery } from './message-ack.interceptor';
export { PaymentsModule } from './payments.module';
export { UnreachableError } from './unreachable';
