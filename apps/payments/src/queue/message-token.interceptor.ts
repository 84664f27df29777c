import { Injectable, UnauthorizedException, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { NatsContext, RmqContext } from '@nestjs/microservices';
import { throwError, type Observable } from 'rxjs';
import { CHARGE_TOKEN_HEADER } from './charge-queue.js';
import type { Delivery } from './message-ack.interceptor.js';
import { ServiceToken } from '../service-token.guard.js';

/**
 * Lets a message (RMQ or NATS) through only with the hop's service token, `PAYMENTS_TOKEN`,
 * in its `authorization` header (`Bearer <token>`), as `ServiceTokenGuard`
 * asks of an HTTP request: whatever can publish on the queue is not thereby
 * trusted to charge. An interceptor rather than a guard, placed inside
 * `MessageAckInterceptor`: a refused message (401) is dead-lettered, where a
 * guard's refusal would leave it unsettled; and before the pipes and
 * `@Idempotent`, so it claims, reads and writes no idempotency record and
 * charges nothing. Compared in constant time on its SHA-256; never logged.
 */
@Injectable()
export class MessageTokenInterceptor implements NestInterceptor {
  constructor(private readonly token: ServiceToken) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'rpc') return next.handle();
    const raw = tokenHeader(context.switchToRpc().getContext<RmqContext | NatsContext>());
    const presented = ServiceToken.bearer(Buffer.isBuffer(raw) ? raw.toString('latin1') : raw);
    if (!this.token.matches(presented)) {
      return throwError(() => new UnauthorizedException(`Present the service token: a ${CHARGE_TOKEN_HEADER} header, Bearer <token>`));
    }
    return next.handle();
  }
}

/** The message's `authorization` header: from a NATS message's headers, or an RMQ delivery's properties. */
function tokenHeader(context: RmqContext | NatsContext): unknown {
  // NATS answers "" for a header it does not have: no token, as an absent RMQ header is.
  if ('getHeaders' in context) return (context.getHeaders() as { get(name: string): string } | undefined)?.get(CHARGE_TOKEN_HEADER);
  return (context.getMessage() as Delivery).properties.headers?.[CHARGE_TOKEN_HEADER];
}
