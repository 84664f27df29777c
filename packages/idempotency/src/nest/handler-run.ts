import { isObservable, Observable } from 'rxjs';
import { currentExecution } from '../current-execution';
import type { Execution } from '../execution';

/**
 * How far the handler of one execution got, told by the handler itself.
 *
 * The interceptor's Observable cannot tell: an outer `timeout()` tears it
 * down, or an inner one errors it, while the handler's promise carries on
 * and charges. Only a wrapper around the handler sees it start, return or
 * throw; `@Idempotent` installs one (see {@link trackedHandler}).
 */
export class HandlerRun {
  state: 'pending' | 'running' | 'returned' | 'threw' = 'pending';
  /** The response status when the handler returned: what it (or `@HttpCode`) chose. */
  status = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly statusNow: () => number) {}

  get settled(): boolean {
    return this.state === 'returned' || this.state === 'threw';
  }

  start(): void {
    if (this.state === 'pending') this.state = 'running';
  }

  settle(returned: boolean): void {
    if (this.settled) return;
    this.state = returned ? 'returned' : 'threw';
    if (returned) this.status = this.statusNow();
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  /** Resolves once the handler has returned or thrown (at once if it has). */
  whenSettled(): Promise<void> {
    return this.settled ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}

const runs = new WeakMap<Execution, HandlerRun>();

/** Attach `run` to `execution`, for the handler's wrapper to find. */
export function trackHandler(execution: Execution, run: HandlerRun): void {
  runs.set(execution, run);
}

const TRACKED = Symbol.for('idempotency-chain.tracked-handler');

/** Whether `handler` reports its own start and end (see {@link trackedHandler}). */
export function isTracked(handler: unknown): boolean {
  return typeof handler === 'function' && (handler as { [TRACKED]?: boolean })[TRACKED] === true;
}

/**
 * `handler` wrapped so that, under an execution, it reports when it starts
 * and when it returns or throws (an Observable it returns: when that
 * completes, errors or is torn down). Everything Nest reads off a handler
 * (route, status code, guards, interceptors...) is copied onto the wrapper.
 */
export function trackedHandler<F extends (...args: never[]) => unknown>(handler: F): F {
  if (isTracked(handler)) return handler;
  const wrapper = function (this: unknown, ...args: Parameters<F>): unknown {
    const execution = currentExecution();
    const run = execution && runs.get(execution);
    if (!run) return handler.apply(this, args);
    run.start();
    let result: unknown;
    try {
      result = handler.apply(this, args);
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
        // Torn down before it completed: it was cancelled, nothing final came of it.
        return () => (subscription.unsubscribe(), run.settle(false));
      });
    }
    if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function') {
      return Promise.resolve(result).then(
        (value) => (run.settle(true), value),
        (error: unknown) => {
          run.settle(false);
          throw error;
        },
      );
    }
    run.settle(true);
    return result;
  };
  for (const key of Reflect.getOwnMetadataKeys(handler)) Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, handler), wrapper);
  Object.defineProperty(wrapper, 'name', { value: handler.name });
  Object.defineProperty(wrapper, TRACKED, { value: true });
  return wrapper as unknown as F;
}
