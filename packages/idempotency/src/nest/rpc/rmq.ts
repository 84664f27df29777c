import { HeaderName } from '../../header-name';
import type { MicroserviceTransport } from './microservice-transport';

/** The parts of an `RmqContext` the key is read from (an amqplib message). */
interface RmqContextLike {
  getMessage: () => { properties?: { headers?: Record<string, unknown> } } | undefined;
  getChannelRef: () => unknown;
}

/** RabbitMQ: the key is an AMQP header of the message. */
export const rmq: MicroserviceTransport = {
  transport: 'RMQ',
  owns(context) {
    const { getMessage, getChannelRef } = context as Partial<RmqContextLike>;
    return typeof getMessage === 'function' && typeof getChannelRef === 'function';
  },
  keyOf(context) {
    return (context as RmqContextLike).getMessage()?.properties?.headers?.[HeaderName.IdempotencyKey];
  },
};
