/**
 * An outbound HTTP client whose idempotency key belongs to the intent: minted
 * once, propagated like a trace id, retried safely within a deadline. No
 * framework dependency; the NestJS middleware lives in `./nest`.
 */
export { IdempotentHttpClient } from './client';
export type { CallOptions, HttpRequest, HttpResponse, IdempotentClientOptions } from './client-options';
export type { AttemptEvent, AttemptListener, AttemptOutcome } from './attempt-event';
export type { KeyPolicy, KeySources, KeyStrategy } from './key-policy';
export { resolveIntentKey } from './key-policy';
export { deriveBusinessKey, deriveHopKey } from './derived-key';
export { currentRequestContext, requestContextFromHeaders, runWithRequestContext } from './request-context';
export { messageKey, messageKeyHeaders } from './message-key';
export type { MessageKeySources } from './message-key';
export type { RequestContext } from './request-context';
export type { BackoffOptions } from './retry-delay';
export * from './errors';
