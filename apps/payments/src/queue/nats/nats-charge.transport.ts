import { Inject, Injectable, type INestApplication } from '@nestjs/common';
import { Transport, type NatsOptions } from '@nestjs/microservices';
import { MessageTransport, type AttachesMessageTransport } from '../../message-transports.js';
import { ChargeConsumerHealth, startConsumer } from '../charges.transport.js';
import { QUEUE_CONFIG } from '../queue.constants.js';
import type { QueueConfig } from '../queue.config.js';

/** The queue group of payments' replicas: a request is answered by one of them, not by each. */
const CHARGE_QUEUE_GROUP = 'payments';

/**
 * Under `CHARGE_TRANSPORT=nats`, answers charge requests on `NATS_URL`
 * (`NatsChargesConsumer`), attached by `attachMessageTransports` before the
 * app listens, after it is initialised (the store connected: a request may
 * be waiting at once). Core NATS, not JetStream: NestJS's transport speaks
 * request/reply, and the requester's re-send after a timeout is the
 * redelivery, which the idempotency record makes safe.
 */
@Injectable()
@MessageTransport()
export class NatsChargeConsumer implements AttachesMessageTransport {
  constructor(
    @Inject(QUEUE_CONFIG) private readonly config: QueueConfig,
    private readonly health: ChargeConsumerHealth,
  ) {}

  async attach(app: INestApplication): Promise<void> {
    await app.init();
    const options: NatsOptions = { transport: Transport.NATS, options: { servers: [this.config.NATS_URL], queue: CHARGE_QUEUE_GROUP } };
    await startConsumer(app, options, this.health);
  }
}
