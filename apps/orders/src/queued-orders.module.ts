import { RequestContextMiddleware } from '@idempotency-chain/http-client/nest';
import { type DynamicModule, type MiddlewareConsumer, Module, type NestModule } from '@nestjs/common';
import { ChargePublisher } from './charge-publisher.js';
import { TRANSPORT_HEALTH_CHECKS } from './health.controller.js';
import { ordersApp } from './orders-app.js';
import { QueuedOrdersController } from './queued-orders.controller.js';

/**
 * orders, charging through RabbitMQ: `POST /orders` places an order and
 * queues its charge on `CHARGE_QUEUE` for payments' consumer (202). The
 * same service as `OrdersModule` but for the transport: start this module
 * instead of that one (in `main.ts`). Its `/health` checks the broker too.
 */
@Module({})
export class QueuedOrdersModule implements NestModule {
  /**
   * orders over RabbitMQ, configured from `env` (default: `process.env`),
   * validated before anything is built.
   *
   * @throws ConfigError naming the first bad variable.
   */
  static async forRoot(env?: Record<string, string | undefined>): Promise<DynamicModule> {
    const app = await ordersApp(env);
    return {
      module: QueuedOrdersModule,
      imports: app.imports,
      controllers: [QueuedOrdersController, ...app.controllers],
      providers: [
        ChargePublisher,
        {
          provide: TRANSPORT_HEALTH_CHECKS,
          inject: [ChargePublisher],
          useFactory: (publisher: ChargePublisher) => [() => publisher.isHealthy('broker')],
        },
        ...app.providers,
      ],
    };
  }

  /** The order's key (and deadline) travel with the charge, in its message's headers. */
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(RequestContextMiddleware).forRoutes(QueuedOrdersController);
  }
}
