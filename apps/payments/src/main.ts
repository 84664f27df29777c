import 'reflect-metadata';
import { runService } from '@idempotency-chain/lab-service';
import { PaymentsModule } from './payments.module';

void runService('payments', (config) => PaymentsModule.register(config));
