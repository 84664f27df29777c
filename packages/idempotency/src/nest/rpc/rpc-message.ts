import { RPC_KEY_FIELD } from '../idempotency.constants';
import { rpcOriginOf } from './microservice-transports';

/**
 * The raw key of a message: from its transport's headers where it has them
 * (see `MicroserviceTransport`), else from the payload's `idempotencyKey` field.
 */
export function rpcKey(payload: unknown, context: unknown): unknown {
  const origin = rpcOriginOf(context);
  const key = origin?.transport.keyOf?.(origin.context);
  if (key !== undefined && key !== null) return Buffer.isBuffer(key) ? key.toString('latin1') : key;
  return isRecord(payload) ? payload[RPC_KEY_FIELD] : undefined;
}

/** The payload without its key, so the fingerprint is the message's content alone. */
export function rpcBody(payload: unknown): unknown {
  if (!isRecord(payload) || !(RPC_KEY_FIELD in payload)) return payload;
  const { [RPC_KEY_FIELD]: _key, ...rest } = payload;
  return rest;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
