import { HeaderName } from '@idempotency-chain/idempotency';
import type { Delivery } from '@idempotency-chain/payments/queue';
import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Observable } from 'rxjs';

const attempts = new AsyncLocalStorage<number>();

/** A redelivery is attempt 2: the broker says whether a consumer had it before, not how often. */
export function deliveryAttempt(message: Delivery): number {
  return message.fields.redelivered ? 2 : 1;
}

/** Which attempt of its caller a request or message is: `request-attempt` over HTTP, the redelivered flag for a message. */
export function attemptOf(context: ExecutionContext): number {
  if (context.getType() === 'rpc') {
    const rpc = context.switchToRpc().getContext<{ getMessage?: () => unknown }>();
    return typeof rpc.getMessage === 'function' ? deliveryAttempt(rpc.getMessage() as Delivery) : 1;
  }
  if (context.getType() !== 'http') return 1;
  const header = context.switchToHttp().getRequest<{ headers: Record<string, unknown> }>().headers[HeaderName.RequestAttempt];
  return Number(header) >= 1 ? Number(header) : 1;
}

/** The attempt being handled, wherever below a handler the lab asks (a fault point in the ledger); 1 outside one. */
export function currentAttempt(): number {
  return attempts.getStore() ?? 1;
}

/**
 * Binds each request's (or message's) attempt for the fault points below
 * its handler: "slow first attempt" and "stall before the side effect" act
 * on attempt 1 only. Installed globally by the lab, so the app reads no
 * attempt header of its own.
 */
@Injectable()
export class AttemptInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    // Nest binds the handler's async context when `handle()` is called: inside `run`, it sees the attempt.
    return attempts.run(attemptOf(context), () => next.handle());
  }
}
