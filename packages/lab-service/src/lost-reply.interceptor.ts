import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { NEVER, catchError, mergeMap, of, throwError, type Observable } from 'rxjs';
import { LabFaults } from './lab-faults';

/**
 * Drops a reply after the work is done and stored: the caller sees the
 * connection close with no answer: the "reply lost after commit" of the lab.
 * Installed as a global interceptor, so it runs outside the route's
 * idempotency interceptor and the result is already stored when it acts.
 */
@Injectable()
export class LostReplyInterceptor implements NestInterceptor {
  constructor(private readonly faults: LabFaults) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const drop = (): boolean => {
      if (!this.faults.takeLostReply()) return false;
      context.switchToHttp().getResponse<FastifyReply>().raw.socket?.destroy();
      return true;
    };
    // Answers and errors alike: what is lost is the reply, whatever it said.
    return next.handle().pipe(
      mergeMap((value) => (drop() ? NEVER : of(value))),
      catchError((error: unknown) => (drop() ? NEVER : throwError(() => error))),
    );
  }
}
