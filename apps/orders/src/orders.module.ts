import { RequestContextMiddleware } from '@idempotency-chain/http-client/nest';
import { type DynamicModule, type MiddlewareConsumer, Module, type NestModule } from '@nestjs/common';
import { ordersApp } from './orders-app.js';
import { OrdersController } from './orders.controller.js';
import { paymentsClient } from './payments.client.js';

/**
 * orders: `POST /orders` places an order and charges it through payments
 * over HTTP. The variant that queues its charges on RabbitMQ is its own
 * module, `QueuedOrdersModule`.
 */
@Module({})
export class OrdersModule implements NestModule {
  /**
   * orders, configured from `env` (default: `process.env`), validated before
   * anything is built.
   *
   * @throws ConfigError naming the first bad variable.
   */
  static async forRoot(env?: Record<string, string | undefined>): Promise<DynamicModule> {
    const app = await ordersApp(env);
    return {
      module: OrdersModule,
      imports: app.imports,
      controllers: [OrdersController, ...app.controllers],
      providers: [...paymentsClient, ...app.providers],
    };
  }

  /** The order's key (and deadline) travel with the charge's HTTP call. */
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(RequestContextMiddleware).forRoutes(OrdersController);
  }
}
