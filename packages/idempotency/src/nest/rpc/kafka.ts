import type { MicroserviceTransport } from './microservice-transport';

/** The parts of a `KafkaContext` that tell it apart from every other transport's. */
interface KafkaContextLike {
  getPartition: () => number;
  getConsumer: () => unknown;
}

/**
 * Kafka, not supported yet: no broker runs where this package is tested, so
 * its redelivery (a rebalance, an offset committed late) has never been
 * shown to leave one execution per key, and a message is refused rather
 * than run with a protection nobody proved.
 */
export const kafka: MicroserviceTransport = {
  transport: 'KAFKA',
  owns(context) {
    const { getPartition, getConsumer } = context as Partial<KafkaContextLike>;
    return typeof getPartition === 'function' && typeof getConsumer === 'function';
  },
  unsupported: "Kafka messages are not supported yet (see the package's README)",
};
