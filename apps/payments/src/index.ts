/**
 * payments' public module, the start of its message transports, and the
 * ledger's contract (its token, its types, what a ledger throws, at boot
 * too), by which the lab decorates payments' ledger or replaces it. `./main`
 * starts it as a process; `./queue` is the queue's contract.
 */
export { ConfigError } from './config.js';
export { LEDGER } from './ledger.provider.js';
export { ledgerUnavailable, newCharge } from './ledger.js';
export type { Charge, ChargeEntry, Fence, Ledger } from './ledger.js';
export { attachMessageTransports } from './message-transports.js';
export { PaymentsModule } from './payments.module.js';

export { UnreachableError } from './unreachable.js';
