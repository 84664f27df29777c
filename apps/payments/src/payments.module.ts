import { LabServiceModule, type ServiceConfig } from '@idempotency-chain/lab-service';
import { type DynamicModule, Module } from '@nestjs/common';
import { ChargesConsumer } from './charges.consumer';
import { ledgerProvider } from './ledger.provider';
import { PaymentsController } from './payments.controller';

/**
 * payments: `POST /charges` writes the ledger; `GET /charges?orderId=` reads it;
 * under `CHARGE_TRANSPORT=amqp` charge requests also arrive from RabbitMQ.
 */
@Module({})
export class PaymentsModule {
  static register(config: ServiceConfig): DynamicModule {
    return {
      module: PaymentsModule,
      imports: [LabServiceModule.register(config)],
      controllers: [PaymentsController, ...(config.chargeTransport === 'amqp' ? [ChargesConsumer] : [])],
      providers: [ledgerProvider],
    };
  }
}
