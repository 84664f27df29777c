import { HeaderName } from '../../header-name';
import type { MicroserviceTransport } from './microservice-transport';

/** The parts of a `NatsContext` and its `MsgHdrs` (`@nats-io/nats-core`) the key is read from. */
interface NatsContextLike {
  getSubject: () => string;
  getHeaders: () => { values?: (name: string, match?: string) => string[] } | undefined;
}

/** `Match.IgnoreCase` of `@nats-io/nats-core`: header names are matched in any letter case, as over HTTP. */
const IGNORE_CASE = 'insensitive';

/**
 * NATS: the key is a message header (core NATS request/reply, events, and
 * JetStream deliveries, which keep the headers they were published with):
 * every value of `idempotency-key`, in any letter case, so a repeated header
 * is refused rather than half read.
 */
export const nats: MicroserviceTransport = {
  transport: 'NATS',
  owns(context) {
    const { getSubject, getHeaders } = context as Partial<NatsContextLike>;
    return typeof getSubject === 'function' && typeof getHeaders === 'function';
  },
  keyOf(context) {
    const values = (context as NatsContextLike).getHeaders()?.values?.(HeaderName.IdempotencyKey, IGNORE_CASE);
    // MsgHdrs answers a missing header with no values (its get() with ''): never a key.
    return values && values.length > 0 ? values : undefined;
  },
};
