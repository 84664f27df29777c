import './tracing'; // first, before any module it instruments
import 'reflect-metadata';
import { createServiceApp, runService } from '@idempotency-chain/service-runtime';
import { OrdersModule } from './orders.module';

void runService('orders', (config) => createServiceApp(OrdersModule.register(config)));
