import { HeaderName } from '../../header-name';
import type { RpcTransportKey } from './transport-key';

/** `NatsContext.getHeaders()`, as far as keys go: the message's NATS headers. */
interface NatsContextLike {
  getHeaders?: () => { get?: (name: string) => unknown } | undefined;
}

/** NATS: the key is a message header. */
export const nats: RpcTransportKey = {
  transport: 'NATS',
  keyOf(context) {
    const { getHeaders } = context as NatsContextLike;
    return typeof getHeaders === 'function' ? getHeaders.call(context)?.get?.(HeaderName.IdempotencyKey) : undefined;
  },
};
