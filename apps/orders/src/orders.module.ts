import { LabServiceModule, type ServiceConfig } from '@idempotency-chain/lab-service';
import { type DynamicModule, Module } from '@nestjs/common';
import { OrdersController } from './orders.controller';

/** orders: `POST /orders`, calls payments. */
@Module({})
export class OrdersModule {
  static register(config: ServiceConfig): DynamicModule {
    return { module: OrdersModule, imports: [LabServiceModule.register(config)], controllers: [OrdersController] };
  }
}
