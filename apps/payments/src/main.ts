import 'reflect-metadata';
import { runService } from '@idempotency-chain/lab-service';
import { startChargeConsumer } from './charges.transport';
import { PaymentsModule } from './payments.module';

// Under CHARGE_TRANSPORT=amqp the consumer starts before listen, so /health answers once messages are taken.
void runService('payments', (config) => PaymentsModule.register(config), {
  beforeListen: async (app, config) => {
    if (config.chargeTransport === 'amqp') await startChargeConsumer(app, config);
  },
});
