/** NestJS integration: bind each inbound request's key and deadline for outbound calls. */
export { RequestContextMiddleware } from './request-context.middleware';
