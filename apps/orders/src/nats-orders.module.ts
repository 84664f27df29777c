import { RequestContextMiddleware } from '@idempotency-chain/http-client/nest';
import { type DynamicModule, type MiddlewareConsumer, Module, type NestModule } from '@nestjs/common';
import { TRANSPORT_HEALTH_CHECKS } from './health.controller.js';
import { NatsChargeRequester } from './nats-charge-requester.js';
import { NatsOrdersController } from './nats-orders.controller.js';
import { ordersApp } from './orders-app.js';

/**
 * orders, charging over NATS: `POST /orders` places an order and asks
 * payments for its charge on NATS (`NATS_URL`), request/reply, re-sending
 * an unanswered request under the same key (201 with the charge). The same
 * service as `OrdersModule` but for the transport: start this module
 * instead of that one (in `main.ts`). Its `/health` checks the broker too.
 */
@Module({})
export class NatsOrdersModule implements NestModule {
  /**
   * orders over NATS, configured from `env` (default: `process.env`),
   * validated before anything is built.
   *
   * @throws ConfigError naming the first bad variable.
   */
  static async forRoot(env?: Record<string, string | undefined>): Promise<DynamicModule> {
    const app = await ordersApp(env);
    return {
      module: NatsOrdersModule,
      imports: app.imports,
      controllers: [NatsOrdersController, ...app.controllers],
      providers: [
        NatsChargeRequester,
        {
          provide: TRANSPORT_HEALTH_CHECKS,
          inject: [NatsChargeRequester],
          useFactory: (requester: NatsChargeRequester) => [() => requester.isHealthy('broker')],
        },
        ...app.providers,
      ],
    };
  }

  /** The order's key (and deadline) travel with the charge request, in its headers. */
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(RequestContextMiddleware).forRoutes(NatsOrdersController);
  }
}
