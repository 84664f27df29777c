/**
 * gateway's public module: what the lab, the scenarios and the bench build
 * it from. `./main` starts it as a process.
 */
export { GatewayModule } from './gateway.module';
