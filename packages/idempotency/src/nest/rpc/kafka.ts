import { HeaderName } from '../../header-name';
import type { RpcTransportKey } from './transport-key';

/** `KafkaContext.getMessage()`, as far as keys go: a Kafka record, the key among its `headers`. */
interface KafkaContextLike {
  getMessage?: () => { headers?: Record<string, unknown> } | undefined;
}

/** Kafka: the key is a record header (bytes, read as Latin-1). */
export const kafka: RpcTransportKey = {
  transport: 'KAFKA',
  keyOf(context) {
    const { getMessage } = context as KafkaContextLike;
    return typeof getMessage === 'function' ? getMessage.call(context)?.headers?.[HeaderName.IdempotencyKey] : undefined;
  },
};
