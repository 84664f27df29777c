/**
 * NestJS integration: bind each inbound request's key and deadline for
 * outbound calls, and answer with what the next hop answered.
 */
export { RequestContextMiddleware } from './request-context.middleware';
export { isCustomerAnswer, relayAnswer } from './relay-answer';
export type { CustomerAnswerRule, RelayOptions } from './relay-answer';
