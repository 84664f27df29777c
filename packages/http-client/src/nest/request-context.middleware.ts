import { Injectable, type NestMiddleware } from '@nestjs/common';
import { requestIdentity } from '@idempotency-chain/idempotency';
import { requestContextFromHeaders, runWithRequestContextOf, type RequestContext } from '../request-context';

/** The part of an inbound request the middleware reads: Express and Fastify (raw) both have it. */
interface InboundRequest {
  headers: Record<string, string | string[] | undefined>;
}

/**
 * Binds the inbound `Idempotency-Key` and deadline (`request-timeout-ms`) for
 * the rest of the request, so every `IdempotentHttpClient` call made while
 * handling it carries both, and, once an `@Idempotent` route has identified
 * the request, the record it runs under (`hop`): the calls' keys are derived
 * from it. Works under the Express and Fastify adapters.
 *
 * @example
 * export class AppModule implements NestModule {
 *   configure(consumer: MiddlewareConsumer) {
 *     consumer.apply(RequestContextMiddleware).forRoutes('*');
 *   }
 * }
 *
 * @public
 */
@Injectable()
export class RequestContextMiddleware implements NestMiddleware {
  /** Runs the rest of the request's pipeline inside its context (key, deadline, identity). */
  use(request: InboundRequest, _response: unknown, next: (error?: unknown) => void): void {
    // `next` runs the rest of the pipeline inside the context: the handler and
    // everything it awaits inherit it, and nothing outside does.
    const inbound = Object.freeze(requestContextFromHeaders(request.headers));
    // Read when a call is made: the route identifies the request after this middleware has run.
    let context: RequestContext = inbound;
    const read = (): RequestContext => {
      if (context.hop === undefined) {
        const hop = requestIdentity(request);
        if (hop !== undefined) context = Object.freeze({ ...inbound, hop });
      }
      return context;
    };
    runWithRequestContextOf(read, () => next());
  }
}
