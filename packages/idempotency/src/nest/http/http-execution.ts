import type { ServerResponse } from 'node:http';
import { isObservable, Observable } from 'rxjs';
import { runInExecution } from '../../current-execution';
import { isIdempotencyError, ResultNotStoredError } from '../../errors';
import type { Execution } from '../../execution';
import type { Membership } from '../../member-list';
import type { GiveUp, RunningExecutions } from '../../running-executions';
import { holderOf, holdResponse, type Writing, type Written } from './held-response';
import { encodeAnswer, problemAnswer, type HttpAnswer } from './http-answer';
import { toHttpException } from '../idempotency.exception';
import type { IdempotentRoute } from '../idempotent-routes';

/** The status of the library's own answer to a client that went away: never stored, never final. */
const CLIENT_CLOSED_REQUEST = 499;

/** What an HTTP execution stores of its answer, the same for every request of a module. */
export interface AnswerLimits {
  /** Body bytes stored at most; a larger answer completes as not stored. */
  maxResponseBytes: number;
  /** Lower-case names of the response headers stored and replayed. */
  replayHeaders: ReadonlySet<string>;
}

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
 * | cancelled (Observable)  | final / not final             | stored / a stored 500 result-not-stored: its work may go on |
 * | wrote it itself (`@Res`)| final / not final             | stored / released                        |
 *
 * A client that went away changes none of this: its answer is still awaited
 * and stored (see `closed`); but a 499, the answer this package gives a
 * client that went away while it waited, is never stored as final. A
 * handler run again within its request (an interceptor's `retry()`) runs
 * under the same execution after it threw, and never after it returned
 * (see `again`).
 */
export class HttpExecution {
  private readonly run: HandlerRun;
  private readonly writing: Writing;
  private ended = false;
  /** Its place among the executions a shutdown can end early, until it ended. */
  private readonly endable: Membership<GiveUp>;

  /** The execution holding `raw`'s answer, while it has not ended: the one a handler run again within its request belongs to. */
  static holding(raw: ServerResponse): HttpExecution | undefined {
    // Found through the held response, never a property of its own: see `holderOf`.
    const holder = holderOf(raw);
    return holder instanceof HttpExecution && !holder.ended ? holder : undefined;
  }

  constructor(
    private readonly execution: Execution,
    raw: ServerResponse,
    private readonly route: IdempotentRoute,
    private readonly options: AnswerLimits,
    /** The coordinator's running executions: this one can be ended early there (see `giveUp`) until it has ended. */
    running: RunningExecutions,
  ) {
    this.endable = running.endableBy(() => this.giveUp());
    this.run = new HandlerRun(() => raw.statusCode);
    this.writing = holdResponse(raw, { maxBytes: options.maxResponseBytes, onWritten: (written) => this.finish(written), holder: this });
    // A client that left while the key was being claimed has closed already: no 'close' is coming.
    if (raw.closed) void this.closed();
    else raw.once('close', () => void this.closed());
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
      run.settle('threw');
      throw error;
    }
    if (isObservable(result)) {
      return new Observable((subscriber) => {
        // Subscribed inside the execution too: the work of a cold Observable runs here.
        const subscription = runInExecution(execution, () =>
          result.subscribe({
            next: (value) => subscriber.next(value),
            error: (error: unknown) => (run.settle('threw'), subscriber.error(error)),
            complete: () => (run.settle('returned'), subscriber.complete()),
          }),
        );
        // Torn down before it ended (a timeout, a client gone): whether its work
        // goes on (a promise behind `from()`) cannot be known, so it counts as done.
        return () => (subscription.unsubscribe(), run.settle('cancelled'));
      });
    }
    if (typeof (result as PromiseLike<unknown> | undefined)?.then !== 'function') {
      run.settle('returned');
      return result;
    }
    return Promise.resolve(result).then(
      (value) => (run.settle('returned'), value),
      (error: unknown) => {
        run.settle('threw');
        throw error;
      },
    );
  }

  /**
   * The handler called again within this request, as an app interceptor's
   * rxjs `retry()` does after an error: once it threw, it runs again under
   * this same execution (its key is this request's, so a claim would only
   * find itself). Once it returned, or while it runs, or after it was
   * cancelled, its work may be done or under way: it is not run again, and
   * this call throws a 500 `result-not-stored` instead.
   */
  again(handler: (execution: Execution) => unknown): unknown {
    if (this.run.state !== 'threw') {
      throw toHttpException(new ResultNotStoredError("This request's handler already ran, and is not run again within the same request"));
    }
    this.run.restart();
    return this.invoke(handler);
  }

  private async finish(written: Written): Promise<HttpAnswer | undefined> {
    const { run } = this;
    if (this.ended) return undefined; // given up on while the app still rendered: its answer is no longer this execution's
    const status = written.whole ? written.answer.status : written.status;
    const headers = written.whole ? written.answer.headers : written.headers;
    // Only this library answers 499, to a client that left while it waited: an answer to nobody, never the key's final one.
    const clientClosed = status === CLIENT_CLOSED_REQUEST;
    const final =
      !clientClosed && this.execution.isFinal({ statusCode: status, headers, body: written.whole ? written.answer.body : undefined });
    if (this.route.writesItself) {
      // The handler wrote this answer itself, whether or not it has returned yet.
      if (!final) return this.release();
      return written.whole ? this.complete(this.stored(written.answer)) : this.completeUnstorable(this.tooLarge());
    }
    if (run.state === 'cancelled' && !final)
      return this.completeUnstorable(`its Observable was torn down before it ended, and ${status} answered`);
    if (run.state === 'running' && !final) {
      // An interceptor answered first (a timeout): the handler may still charge. Keep the key until it ends.
      this.ended = true;
      void run
        .whenSettled()
        .then(() =>
          run.state === 'threw' ? this.release() : this.completeUnstorable(`an answer of ${status} left before the handler returned`),
        );
      return undefined;
    }
    if (clientClosed) return run.state === 'threw' ? this.release() : this.completeUnstorable('the client went away, and 499 was answered');
    const failedAfter = run.state === 'returned' && status !== run.status;
    if (!final && !failedAfter) return this.release();
    if (!written.whole) return this.completeUnstorable(this.tooLarge());
    return this.complete(
      this.stored(written.answer),
      failedAfter && status >= 400 ? new Error(`the answer failed with ${status} after the handler returned`) : undefined,
    );
  }

  private tooLarge(): string {
    return `the response body is larger than the ${this.options.maxResponseBytes} bytes an answer may store`;
  }

  /**
   * The client went away: the answer is still rendered and stored as usual.
   * It is awaited as long as a duplicate would wait for it (`maxWaitMs`, at
   * least a lease) after the handler ended: the app's interceptors may take
   * their time, and a late answer is not a missing one. An answer that
   * started, though, is given up on once it has made no progress for a
   * whole lease (a stream cut off with the connection). Given up on, the
   * record completes as a 500 result-not-stored (released if the handler
   * threw): it never holds the key for good, and work that was done is
   * never run again.
   */
  private async closed(): Promise<void> {
    if (this.ended) return; // the usual 'close', after the answer went out
    await this.run.whenSettled();
    const { leaseMs, maxWaitMs } = this.route.policy;
    const renderedBy = performance.now() + maxWaitMs;
    let last = this.writing.written;
    const watch = setInterval(() => {
      // Run again within the request (see `again`): watched anew from its end.
      if (this.run.state === 'running') return void (clearInterval(watch), this.closed());
      const now = this.writing.written;
      const progressing = now < 0 ? performance.now() < renderedBy : now !== last;
      if (!this.ended && progressing) return void (last = now);
      clearInterval(watch);
      if (this.ended) return;
      if (this.run.state === 'threw') void this.release();
      else
        void this.completeUnstorable(
          now < 0
            ? 'the connection closed, and no answer was written'
            : 'the connection closed, and the answer stopped before it was whole',
        );
    }, leaseMs);
    watch.unref();
  }

  /**
   * Shutdown can wait no longer (see `IdempotencyModule.drain` and `RunningExecutions.giveUp`): if the
   * handler has ended and only its answer is missing, end the execution now,
   * while the store is still open, as the answer watch would have (see
   * `closed`): a stored 500 result-not-stored, or released if the handler
   * threw. Its work is never run again. Left to its lease: an execution
   * whose handler still runs, or one that writes its answer itself
   * (`@Res()`), whose handler may well return before its work is done -
   * for both, whether the work will happen cannot be known.
   *
   * @returns how it ended here, or `undefined` when it was left alone.
   */
  async giveUp(): Promise<'completed' | 'released' | undefined> {
    if (this.ended || !this.execution.protected || this.route.writesItself || this.run.state === 'running') return undefined;
    if (this.run.state === 'threw') {
      await this.release();
      return 'released';
    }
    await this.completeUnstorable('the server shut down before its answer was whole');
    return 'completed';
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
    this.endable.leave();
    return undefined;
  }

  private completeUnstorable(reason: string): Promise<HttpAnswer | undefined> {
    const error = new ResultNotStoredError(`This request was executed, but its answer could not be stored: ${reason}`);
    return this.complete(problemAnswer(error), error);
  }

  /** Store `answer`; when the store refuses (lease lost, unknown commit), answer that instead. */
  private async complete(answer: HttpAnswer, unstorable?: unknown): Promise<HttpAnswer | undefined> {
    this.ended = true;
    try {
      await this.execution.complete(encodeAnswer(answer), unstorable);
      return undefined;
    } catch (error) {
      if (isIdempotencyError(error)) return problemAnswer(error);
      throw error;
    } finally {
      this.endable.leave();
    }
  }
}

/** How far the handler got: the answer on the wire is judged by it. */
class HandlerRun {
  state: 'running' | 'returned' | 'threw' | 'cancelled' = 'running';
  /** The response status when the handler returned: what it (or `@HttpCode`) chose. */
  status = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly statusNow: () => number) {}

  /** The handler runs again after it threw (see `HttpExecution.again`). */
  restart(): void {
    this.state = 'running';
    this.status = 0;
  }

  settle(end: 'returned' | 'threw' | 'cancelled'): void {
    if (this.state !== 'running') return;
    this.state = end;
    if (end === 'returned') this.status = this.statusNow();
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  /** Resolves once the handler has returned or thrown (at once if it has). */
  whenSettled(): Promise<void> {
    return this.state !== 'running' ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}
