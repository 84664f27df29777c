import { HeaderName } from '../../header-name';
import type { MicroserviceTransport } from './microservice-transport';

/** The part of a `RedisContext` (or `TcpContext`) the key is read from: Nest's packet metadata. */
interface PacketMetadataContextLike {
  getMetadata: () => Record<string, unknown> | undefined;
}

/**
 * Redis (and TCP): the key is an entry of the packet metadata, the
 * out-of-band values NestJS 12 sends with a packet (set on the client with
 * `ClientProxy#setOnDispatchHook`): `idempotency-key`. A packet without it
 * carries the key in the payload.
 */
export const redis: MicroserviceTransport = {
  transport: 'REDIS',
  owns(context) {
    return typeof (context as Partial<PacketMetadataContextLike>).getMetadata === 'function';
  },
  keyOf(context) {
    return (context as PacketMetadataContextLike).getMetadata()?.[HeaderName.IdempotencyKey];
  },
};
