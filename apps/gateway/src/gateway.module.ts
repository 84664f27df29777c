import { LabServiceModule, type ServiceConfig } from '@idempotency-chain/lab-service';
import { type DynamicModule, Module } from '@nestjs/common';
import { CheckoutController } from './checkout.controller';

/** gateway: `POST /checkout`, calls orders. */
@Module({})
export class GatewayModule {
  static register(config: ServiceConfig): DynamicModule {
    return { module: GatewayModule, imports: [LabServiceModule.register(config)], controllers: [CheckoutController] };
  }
}
