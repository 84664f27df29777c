/**
 * orders' public module: its two modules (one per transport) and the
 * publisher the lab replaces to send no key. `./main` starts it as a process.
 */
export { ChargePublisher } from './charge-publisher';
export { OrdersModule } from './orders.module';
export { QueuedOrdersModule } from './queued-orders.module';
