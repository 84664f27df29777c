/** How a lab service boots: configuration, store, logs, health, metrics, faults. */
export { createServiceApp, runService } from './bootstrap';
export type { RunOptions } from './bootstrap';
export { ConfigError, KEY_POLICIES, loadConfig, NAIVE_VARIANTS } from './config';
export type { LabKeyPolicy, NaiveVariant, ServiceConfig, ServiceName } from './config';
export { callNextHop, clientKeyPolicy } from './downstream';
export { LabFaults } from './lab-faults';
export type { FaultPlan } from './lab-faults';
export { idempotencyPolicy, LabServiceModule, serverKeyMode } from './lab-service.module';
export type { StoreBinding } from './store.factory';
export { DOWNSTREAM, SERVICE_CONFIG, STORE } from './tokens';
export { OrderPaymentDto } from './order-payment.dto';
export type { PaidOrder } from './order-payment.dto';
export { bootService } from './testing';
export type { BootedService } from './testing';
export { CHARGE_PATTERN, chargeQueueOptions, deadLetterQueue } from './charge-queue';
