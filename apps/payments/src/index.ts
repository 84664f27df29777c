/**
 * payments' public module: the module, the start of its queue consumer, and
 * the ledger's token and types, which the lab decorates with its fault
 * points. `./main` starts it as a process.
 */
export { consumeChargesWhenQueued } from './charges.transport';
export { LEDGER } from './ledger.provider';
export { MemoryLedger } from './ledger';
export type { Charge, ChargeEntry, Fence, Ledger } from './ledger';
export type { Delivery } from './message-ack.interceptor';
export { PaymentsModule } from './payments.module';
