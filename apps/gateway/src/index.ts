/**
 * gateway's public module: what a test, or a harness of your own, builds it
 * from. `./main` starts it as a process.
 */
export { ConfigError } from './config.js';
export { GatewayModule } from './gateway.module.js';
export { ORDERS_CLIENT_OPTIONS } from './orders.client.js';
