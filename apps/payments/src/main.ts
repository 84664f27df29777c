import './tracing'; // first, before any module it instruments
import 'reflect-metadata';
import { createServiceApp, runService } from '@idempotency-chain/service-runtime';
import { consumeChargesWhenQueued } from './charges.transport';
import { PaymentsModule } from './payments.module';

void runService('payments', (config) => createServiceApp(PaymentsModule.register(config)), { beforeListen: consumeChargesWhenQueued });
