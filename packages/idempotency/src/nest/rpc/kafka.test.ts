import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { KafkaContext, MqttContext, NatsContext, RedisContext, RmqContext } from '@nestjs/microservices';
import { IdempotencyCoordinator } from '../../coordinator';
import { MemoryStore } from '../../memory-store';
import { kafka } from './kafka';
import { RpcTransport } from './rpc.transport';

describe('Kafka transport', () => {
  const kafkaContext = new KafkaContext([
    { headers: { 'idempotency-key': 'k-1' } } as never,
    0,
    'charges',
    {} as never,
    async () => {},
    {} as never,
  ]);

  it("tells a Kafka message's context from every other transport's", () => {
    expect(kafka.owns(kafkaContext)).toBe(true);
    for (const other of [
      new NatsContext(['charges', undefined]),
      new MqttContext(['charges', {}]),
      new RedisContext(['charges']),
      new RmqContext([{}, {}, 'charges']),
    ]) {
      expect(kafka.owns(other)).toBe(false);
    }
  });

  it('says a Kafka message cannot be protected yet, and no other message', () => {
    const transport = new RpcTransport(new IdempotencyCoordinator({ service: 'payments', store: new MemoryStore() }));
    const call = (context: object) => {
      const host = new ExecutionContextHost([{ amountCents: 5 }, context]);
      host.setType('rpc');
      return host;
    };

    expect(transport.unsupported(call(kafkaContext))).toMatch(/^Kafka messages are not supported yet/);
    expect(transport.unsupported(call(new NatsContext(['charges', undefined])))).toBeUndefined();
  });
});
