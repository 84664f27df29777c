import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { catchError, concatMap, from, throwError, type Observable } from 'rxjs';
import { attemptOf } from './attempt';
import { LabFaults } from './lab-faults';
import { repliesToWork } from './work-reply';

/**
 * Holds back the answer to a first attempt after the work is done and
 * stored (`slowFirstReplies`): the caller's attempt times out and it retries
 * a request that has in fact succeeded. Global, outside the handler
 * `@Idempotent` wraps, at every hop.
 */
@Injectable()
export class SlowReplyInterceptor implements NestInterceptor {
  constructor(private readonly faults: LabFaults) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (!repliesToWork(context)) return next.handle();
    const attempt = attemptOf(context);
    const hold = async (): Promise<void> => {
      const ms = this.faults.takeSlowReply(attempt);
      if (ms > 0) await sleep(ms);
    };
    // Answers and errors alike: what is slow is the reply, whatever it says.
    return next.handle().pipe(
      concatMap((value) => from(hold().then(() => value))),
      catchError((error: unknown) => from(hold()).pipe(concatMap(() => throwError(() => error)))),
    );
  }
}
