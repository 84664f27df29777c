import { fromJSON, type PackageDefinition } from '@grpc/proto-loader';

/** The transports a user protects with `@Idempotent`, as the section names them. */
export type TransportName = 'rmq' | 'nats' | 'mqtt' | 'grpc' | 'redis' | 'graphql';

/** The brokers on this machine (the Redis transport uses `REDIS_URL`). */
export const TRANSPORT_URLS = {
  rmq: process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
  nats: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
  mqtt: process.env.MQTT_URL ?? 'mqtt://127.0.0.1:1883',
};

/**
 * `package payments; service Charges { rpc Charge (ChargeRequest) returns (ChargeReply); }`,
 * built in memory: the compiled benchmark carries no `.proto` file.
 */
export const CHARGES_PROTO = (): PackageDefinition =>
  fromJSON({
    nested: {
      payments: {
        nested: {
          Charges: { methods: { Charge: { requestType: 'ChargeRequest', responseType: 'ChargeReply', comment: '' } } },
          ChargeRequest: { fields: { amountCents: { type: 'int32', id: 1 } } },
          ChargeReply: { fields: { chargeId: { type: 'string', id: 1 }, amountCents: { type: 'int32', id: 2 } } },
        },
      },
    },
  });
