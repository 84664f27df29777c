import { HeaderName } from '../../header-name';
import type { RpcTransportKey } from './transport-key';

/** `RmqContext.getMessage()`, as far as keys go: an AMQP message, the key among its `properties.headers`. */
interface RmqContextLike {
  getMessage?: () => { properties?: { headers?: Record<string, unknown> } } | undefined;
}

/** RabbitMQ: the key is an AMQP header of the message. */
export const rmq: RpcTransportKey = {
  transport: 'RMQ',
  keyOf(context) {
    const { getMessage } = context as RmqContextLike;
    return typeof getMessage === 'function' ? getMessage.call(context)?.properties?.headers?.[HeaderName.IdempotencyKey] : undefined;
  },
};
