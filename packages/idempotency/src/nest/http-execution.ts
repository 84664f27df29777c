import type { ServerResponse } from 'node:http';
import { isObservable, Observable } from 'rxjs';
import { runInExecution } from '../current-execution';
import { ResultNotStoredError } from '../errors';
import type { Execution } from '../execution';
import { holdResponse, type Written } from './held-response';
import { encodeAnswer, type HttpAnswer } from './http-answer';
import { IdempotencyException, problemAnswer, toHttpException } from './idempotency.exception';
import type { IdempotentRoute } from './idempotent-routes';

/** How long an answer may still come after the client left and the handler ended. */
const GRACE_AFTER_CLOSE_MS = 1_000;

/**
 * One claimed HTTP execution: the handler runs under it, its answer is held
 * at the Node response, and the execution ends - stored or released - on
 * what went on the wire and on how far the handler got:
 *
 * | handler                 | answer on the wire            | record                                  |
 * |-------------------------|-------------------------------|-----------------------------------------|
 * | threw                   | final / not final             | stored / released                       |
 * | returned                | its own status, final or not  | stored / released                       |
 * | returned                | another status (failed after) | stored: the error it became, unstorable |
 * | still running           | final                         | stored                                  |
 * | still running           | not final (a timeout's 408)   | kept until the handler ends; then a stored 500 result-not-stored, or released if it threw |
 */
export class HttpExecution {
  private readonly run: HandlerRun;
  private ended = false;

  constructor(
    private readonly execution: Execution,
    raw: ServerResponse,
    private readonly route: IdempotentRoute,
    private readonly options: { maxResponseBytes: number; replayHeaders: ReadonlySet<string> },
  ) {
    this.run = new HandlerRun(() => raw.statusCode);
    holdResponse(raw, { maxBytes: options.maxResponseBytes, onWritten: (written) => this.finish(written) });
    raw.once('close', () => void this.closed());
  }

  /**
   * Call the handler under the execution (so it sees `currentExecution()`),
   * and note when it returns or throws - an Observable it returns: when that
   * completes, errors, or is torn down before it completed (cancelled).
   */
  invoke(handler: (execution: Execution) => unknown): unknown {
    const { run, execution } = this;
    let result: unknown;
    try {
      result = runInExecution(execution, () => handler(execution));
    } catch (error) {
      run.settle(false);
      throw error;
    }
    if (isObservable(result)) {
      return new Observable((subscriber) => {
        const subscription = result.subscribe({
          next: (value) => subscriber.next(value),
          error: (error: unknown) => (run.settle(false), subscriber.error(error)),
          complete: () => (run.settle(true), subscriber.complete()),
        });
        return () => (subscription.unsubscribe(), run.settle(false));
      });
    }
    if (typeof (result as PromiseLike<unknown> | undefined)?.then !== 'function') {
      run.settle(true);
      return result;
    }
    return Promise.resolve(result).then(
      (value) => (run.settle(true), value),
      (error: unknown) => {
        run.settle(false);
        throw error;
      },
    );
  }

  private async finish(written: Written): Promise<HttpAnswer | undefined> {
    const { run } = this;
    const status = written.whole ? written.answer.status : written.status;
    const headers = written.whole ? written.answer.headers : written.headers;
    const final = this.route.policy.isFinal({ statusCode: status, headers, body: written.whole ? written.answer.body : undefined });
    if (run.state === 'running' && !final) {
      // An interceptor answered first (a timeout): the handler may still charge. Keep the key until it ends.
      this.ended = true;
      void run.whenSettled().then(() => (run.state === 'threw' ? this.release() : this.completeUnstorable(`an answer of ${status} left before the handler returned`)));
      return undefined;
    }
    const failedAfter = run.state === 'returned' && status !== run.status;
    if (!final && !failedAfter) return this.release();
    if (!written.whole) return this.completeUnstorable(`the response body is larger than the ${this.options.maxResponseBytes} bytes an answer may store`);
    return this.complete(this.stored(written.answer), failedAfter && status >= 400 ? new Error(`the answer failed with ${status} after the handler returned`) : undefined);
  }

  /** The client went away: an answer that never comes must not hold the key for good. */
  private async closed(): Promise<void> {
    if (this.ended) return; // the usual 'close', after the answer went out
    await this.run.whenSettled();
    setTimeout(() => {
      if (this.ended) return;
      if (this.run.state === 'threw') void this.release();
      else void this.completeUnstorable('the connection closed before the answer was written');
    }, GRACE_AFTER_CLOSE_MS).unref();
  }

  /** The answer with only the headers that are replayed. */
  private stored(answer: HttpAnswer): HttpAnswer {
    const headers: HttpAnswer['headers'] = {};
    for (const name in answer.headers) if (this.options.replayHeaders.has(name)) headers[name] = answer.headers[name] as string;
    return { status: answer.status, headers, body: answer.body };
  }

  private async release(): Promise<undefined> {
    this.ended = true;
    await this.execution.release();
    return undefined;
  }

  private completeUnstorable(reason: string): Promise<HttpAnswer | undefined> {
    const error = new ResultNotStoredError(`This request was executed, but its answer could not be stored: ${reason}`);
    return this.complete(problemAnswer(new IdempotencyException(error)), error);
  }

  /** Store `answer`; when the store refuses (lease lost, unknown commit), answer that instead. */
  private async complete(answer: HttpAnswer, unstorable?: unknown): Promise<HttpAnswer | undefined> {
    this.ended = true;
    try {
      await this.execution.complete(encodeAnswer(answer), unstorable);
      return undefined;
    } catch (error) {
      const exception = toHttpException(error);
      if (exception instanceof IdempotencyException) return problemAnswer(exception);
      throw error;
    }
  }
}

/** How far the handler got: the answer on the wire is judged by it. */
class HandlerRun {
  state: 'running' | 'returned' | 'threw' = 'running';
  /** The response status when the handler returned: what it (or `@HttpCode`) chose. */
  status = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly statusNow: () => number) {}

  settle(returned: boolean): void {
    if (this.state !== 'running') return;
    this.state = returned ? 'returned' : 'threw';
    if (returned) this.status = this.statusNow();
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  /** Resolves once the handler has returned or thrown (at once if it has). */
  whenSettled(): Promise<void> {
    return this.state !== 'running' ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}
