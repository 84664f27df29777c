import { grpc } from './grpc';
import { kafka } from './kafka';
import { mqtt } from './mqtt';
import { nats } from './nats';
import { redis } from './redis';
import { rmq } from './rmq';
import type { MicroserviceTransport } from './microservice-transport';

/**
 * Every transport whose messages this package tells apart, asked in this
 * order: the first that owns a message's context is its transport. A
 * transport is one file of this folder exporting its
 * `MicroserviceTransport`, and one entry here.
 */
const MICROSERVICE_TRANSPORTS: readonly MicroserviceTransport[] = [rmq, nats, mqtt, grpc, redis, kafka];

/** A message's transport with its context, which the transport's members are asked with. */
export interface RpcOrigin {
  transport: MicroserviceTransport;
  context: object;
}

/** The transport of a handler's RPC context; `undefined` when it is none of `MICROSERVICE_TRANSPORTS`. */
export function rpcOriginOf(context: unknown): RpcOrigin | undefined {
  if (typeof context !== 'object' || context === null) return undefined;
  const transport = MICROSERVICE_TRANSPORTS.find((candidate) => candidate.owns(context));
  return transport && { transport, context };
}
