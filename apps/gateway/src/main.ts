import 'reflect-metadata';
import { runService } from '@idempotency-chain/lab-service';
import { GatewayModule } from './gateway.module';

void runService('gateway', (config) => GatewayModule.register(config));
