import { formatIdempotencyKey, HeaderName } from '@idempotency-chain/idempotency';
import { resolveIntentKey, type KeySources } from './key-policy';
import { currentRequestContext } from './request-context';

/**
 * What a message says about its own key: as a call's (see `KeySources`),
 * without what the request being handled supplies.
 *
 * @public
 */
export type MessageKeySources = Pick<KeySources, 'key' | 'businessKey' | 'callName' | 'scope'>;

/**
 * The key an outbound message sent now carries: the one the HTTP client
 * would send on a call made at this point (`resolveIntentKey` under
 * `propagated`, from the request being handled), so a hop that publishes
 * (a `ClientProxy` `send` or `emit`) keeps one key per intent as an HTTP
 * hop does. Inside an `@Idempotent` route that is `deriveHopKey` of its
 * record: every retry of the caller's request sends the same key, and two
 * callers never share one. `undefined` when nothing names the intent (no
 * request bound, or one without a key or a record, and no `key` or
 * `businessKey`): a message without a key is not given a fresh one per
 * publish, which would make each re-send a new intent.
 *
 * @throws as `resolveIntentKey` does: an inbound key no `@Idempotent`
 *   route identified, a `businessKey` without a caller's scope.
 * @example
 * const key = messageKey({ callName: 'charge' }); // the same on every retry of the order
 *
 * @public
 */
export function messageKey(sources: MessageKeySources = {}): string | undefined {
  const context = currentRequestContext();
  const named = sources.key !== undefined || sources.businessKey !== undefined;
  if (!named && context?.key === undefined && context?.hop === undefined) return undefined;
  return resolveIntentKey('propagated', { ...sources, inboundKey: context?.key, hop: context?.hop });
}

/**
 * The `idempotency-key` header of an outbound message, written as the HTTP
 * header is (a structured-field string), for the transport's headers: an
 * RMQ record's `headers`, a NATS `MsgHdrs` (`headers()` of
 * `@nats-io/transport-node`, set name by name), Kafka's, MQTT 5's user
 * properties. Empty when {@link messageKey} gives no key.
 *
 * @example
 * const record = new RmqRecordBuilder(charge).setOptions({ headers: messageKeyHeaders() }).build();
 *
 * const natsHeaders = headers();
 * for (const [name, value] of Object.entries(messageKeyHeaders())) natsHeaders.set(name, value);
 * client.send('payments.charge', new NatsRecordBuilder(charge).setHeaders(natsHeaders).build());
 *
 * @public
 */
export function messageKeyHeaders(sources: MessageKeySources = {}): Record<string, string> {
  const key = messageKey(sources);
  return key === undefined ? {} : { [HeaderName.IdempotencyKey]: formatIdempotencyKey(key) };
}
