/**
 * gateway's public module: what the lab and the tests build it from.
 * `./main` starts it as a process.
 */
export { ConfigError } from './config';
export { GatewayModule } from './gateway.module';
export { ORDERS_CLIENT_OPTIONS } from './orders.client';
