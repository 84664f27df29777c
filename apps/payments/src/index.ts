/**
 * payments' public module, the start of its queue consumer, and the
 * ledger's contract (its token, its types, what a ledger throws, at boot
 * too), by which the lab decorates payments' ledger or replaces it. `./main`
 * starts it as a process.
 */
export { CHARGE_PATTERN, CHARGE_TOKEN_HEADER, chargeQueueOptions, deadLetterQueue } from './charge-queue.js';
export { consumeChargesWhenQueued } from './charges.transport.js';
export { ConfigError } from './config.js';
export { LEDGER } from './ledger.provider.js';
export { ledgerUnavailable, newCharge, StaleWriteError } from './ledger.js';
export type { Charge, ChargeEntry, Fence, Ledger } from './ledger.js';
export type { Delivery } from './message-ack.interceptor.js';
export { PaymentsModule } from './payments.module.js';
export { UnreachableError } from './unreachable.js';
