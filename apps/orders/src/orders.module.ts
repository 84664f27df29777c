import { IdempotentHttpClient } from '@idempotency-chain/http-client';
import { RequestContextMiddleware } from '@idempotency-chain/http-client/nest';
import { nextHopClient, type ServiceConfig } from '@idempotency-chain/service-runtime';
import { type DynamicModule, type MiddlewareConsumer, Module, type NestModule } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { ordersApp } from './orders-app';
import { OrdersController } from './orders.controller';

/**
 * orders: `POST /orders` places an order and charges it through payments
 * over HTTP. The variant that queues its charges on RabbitMQ is its own
 * module, `QueuedOrdersModule`.
 */
@Module({})
export class OrdersModule implements NestModule {
  static register(config: ServiceConfig): DynamicModule {
    const app = ordersApp(config);
    return {
      module: OrdersModule,
      imports: app.imports,
      controllers: [OrdersController, ...app.controllers],
      providers: [
        { provide: IdempotentHttpClient, inject: [PinoLogger], useFactory: (logger: PinoLogger) => nextHopClient(config, logger) },
        ...app.providers,
      ],
    };
  }

  /** The order's key (and deadline) travel with the charge's HTTP call. */
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(RequestContextMiddleware).forRoutes(OrdersController);
  }
}
