/**
 * gateway's public module: what a test, or a harness of your own, builds it
 * from. `./main` starts it as a process.
 */
export { ConfigError } from './config';
export { GatewayModule } from './gateway.module';
export { ORDERS_CLIENT_OPTIONS } from './orders.client';
