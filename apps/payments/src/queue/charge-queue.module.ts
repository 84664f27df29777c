import { type DynamicModule, Module } from '@nestjs/common';
import { ChargesModule } from '../charges.module.js';
import { TRANSPORT_HEALTH_CHECKS } from '../health.controller.js';
import { ChargesConsumer } from './charges.consumer.js';
import { ChargeConsumerHealth, RabbitChargeConsumer } from './charges.transport.js';
import { NatsChargeConsumer } from './nats/nats-charge.transport.js';
import { NatsChargesConsumer } from './nats/nats-charges.consumer.js';
import { QUEUE_CONFIG } from './queue.constants.js';
import { validateQueueConfig } from './queue.config.js';

/**
 * Charge requests from a queue, besides `POST /charges`: everything of it is
 * in this folder. Under `CHARGE_TRANSPORT=amqp` it consumes `CHARGE_QUEUE`
 * on RabbitMQ (`ChargesConsumer`), under `nats` it answers charge requests
 * on NATS (`nats/`), attached by `attachMessageTransports`, and adds the
 * broker to `/health`; under `http` (the default) it provides
 * nothing. An app that takes only HTTP deletes this folder and its import in
 * `PaymentsModule`.
 */
@Module({})
export class ChargeQueueModule {
  /**
   * The queue, configured from `env`, validated here.
   *
   * @throws ConfigError naming the first bad variable.
   */
  static forRoot(env: Record<string, string | undefined>): DynamicModule {
    const config = validateQueueConfig(env);
    if (config.CHARGE_TRANSPORT === 'http') return { module: ChargeQueueModule };
    const nats = config.CHARGE_TRANSPORT === 'nats';
    return {
      module: ChargeQueueModule,
      imports: [ChargesModule],
      controllers: [nats ? NatsChargesConsumer : ChargesConsumer],
      providers: [
        { provide: QUEUE_CONFIG, useValue: config },
        ChargeConsumerHealth,
        nats ? NatsChargeConsumer : RabbitChargeConsumer,
        // /health checks the consumer's broker too.
        {
          provide: TRANSPORT_HEALTH_CHECKS,
          inject: [ChargeConsumerHealth],
          useFactory: (consumer: ChargeConsumerHealth) => [() => consumer.isHealthy('broker')],
        },
      ],
      exports: [TRANSPORT_HEALTH_CHECKS],
    };
  }
}
