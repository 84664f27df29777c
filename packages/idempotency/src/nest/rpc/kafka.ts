import { HeaderName } from '../../header-name';
import type { RpcTransportKey } from './transport-key';

/** The parts of a `KafkaContext` that tell it apart and hold the key: a Kafka record, the key among its `headers`. */
interface KafkaContextLike {
  getMessage: () => { headers?: Record<string, unknown> } | undefined;
  getPartition: () => number;
  getConsumer: () => unknown;
}

/** Kafka: the key is a record header (bytes, read as Latin-1). */
export const kafka: RpcTransportKey = {
  transport: 'KAFKA',
  owns(context) {
    const { getPartition, getConsumer } = context as Partial<KafkaContextLike>;
    return typeof getPartition === 'function' && typeof getConsumer === 'function';
  },
  keyOf(context) {
    return (context as KafkaContextLike).getMessage()?.headers?.[HeaderName.IdempotencyKey];
  },
};
