import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { catchError, tap, throwError, type Observable } from 'rxjs';
import { LabFaults } from './lab-faults';
import { repliesToWork } from './work-reply';

/**
 * Drops a reply after the work is done and stored: the caller sees the
 * connection close with no answer: the "reply lost after commit" of the lab.
 * Installed as a global interceptor, outside the handler `@Idempotent`
 * wraps, so the work is done when it acts.
 */
@Injectable()
export class LostReplyInterceptor implements NestInterceptor {
  constructor(private readonly faults: LabFaults) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (!repliesToWork(context)) return next.handle();
    // The connection closes before the answer is written; the answer then
    // goes nowhere and the request ends, so shutdown never waits for it.
    const drop = () => {
      if (this.faults.takeLostReply()) context.switchToHttp().getResponse<FastifyReply>().raw.socket?.destroy();
    };
    // Answers and errors alike: what is lost is the reply, whatever it said.
    return next.handle().pipe(
      tap(() => drop()),
      catchError((error: unknown) => {
        drop();
        return throwError(() => error);
      }),
    );
  }
}
