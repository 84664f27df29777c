import './tracing'; // first, before any module it instruments
import 'reflect-metadata';
import { createServiceApp, runService } from '@idempotency-chain/service-runtime';
import { GatewayModule } from './gateway.module';

void runService('gateway', (config) => createServiceApp(GatewayModule.register(config)));
