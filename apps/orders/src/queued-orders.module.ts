import { RequestContextMiddleware } from '@idempotency-chain/http-client/nest';
import type { ServiceConfig } from '@idempotency-chain/service-runtime';
import { type DynamicModule, type MiddlewareConsumer, Module, type NestModule } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { ChargePublisher } from './charge-publisher';
import { ordersApp } from './orders-app';
import { QueuedOrdersController } from './queued-orders.controller';

/**
 * orders, charging through RabbitMQ: `POST /orders` places an order and
 * queues its charge on `CHARGE_QUEUE` for payments' consumer (202). The
 * same service as `OrdersModule` but for the transport: start this module
 * instead of that one (the lab does under `CHARGE_TRANSPORT=amqp`).
 */
@Module({})
export class QueuedOrdersModule implements NestModule {
  static register(config: ServiceConfig): DynamicModule {
    const app = ordersApp(config);
    return {
      module: QueuedOrdersModule,
      imports: app.imports,
      controllers: [QueuedOrdersController, ...app.controllers],
      providers: [
        { provide: ChargePublisher, inject: [PinoLogger], useFactory: (logger: PinoLogger) => new ChargePublisher(config, logger) },
        ...app.providers,
      ],
    };
  }

  /** The order's key (and deadline) travel with the charge, in its message's headers. */
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(RequestContextMiddleware).forRoutes(QueuedOrdersController);
  }
}
