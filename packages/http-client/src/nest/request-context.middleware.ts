import { Injectable, type NestMiddleware } from '@nestjs/common';
import { requestContextFromHeaders, runWithRequestContext } from '../request-context';

/** The part of an inbound request the middleware reads: Express and Fastify (raw) both have it. */
interface InboundRequest {
  headers: Record<string, string | string[] | undefined>;
}

/**
 * Binds the inbound `Idempotency-Key` and deadline (`request-timeout-ms`) for
 * the rest of the request, so every `IdempotentHttpClient` call made while
 * handling it carries both. Works under the Express and Fastify adapters.
 *
 * @example
 * export class AppModule implements NestModule {
 *   configure(consumer: MiddlewareConsumer) {
 *     consumer.apply(RequestContextMiddleware).forRoutes('*');
 *   }
 * }
 */
@Injectable()
export class RequestContextMiddleware implements NestMiddleware {
  use(request: InboundRequest, _response: unknown, next: (error?: unknown) => void): void {
    // `next` runs the rest of the pipeline inside the context: the handler and
    // everything it awaits inherit it, and nothing outside does.
    runWithRequestContext(requestContextFromHeaders(request.headers), () => next());
  }
}
