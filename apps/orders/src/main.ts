import 'reflect-metadata';
import { runService } from '@idempotency-chain/lab-service';
import { OrdersModule } from './orders.module';

void runService('orders', (config) => OrdersModule.register(config));
