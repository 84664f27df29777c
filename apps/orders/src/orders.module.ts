import { LabServiceModule, type ServiceConfig } from '@idempotency-chain/lab-service';
import { type DynamicModule, Module } from '@nestjs/common';
import { ChargePublisher } from './charge-publisher';
import { OrdersController, QueuedOrdersController } from './orders.controller';

/** orders: `POST /orders`, charges through payments over HTTP, or over RabbitMQ under `CHARGE_TRANSPORT=amqp`. */
@Module({})
export class OrdersModule {
  static register(config: ServiceConfig): DynamicModule {
    const queued = config.chargeTransport === 'amqp';
    return {
      module: OrdersModule,
      imports: [LabServiceModule.register(config)],
      controllers: [queued ? QueuedOrdersController : OrdersController],
      providers: queued ? [ChargePublisher] : [],
    };
  }
}
