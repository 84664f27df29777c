import { AsyncLocalStorage } from 'node:async_hooks';
import type { Execution } from './execution';

// One store per process, even when two copies of this package are loaded.
const slot = Symbol.for('idempotency-chain.idempotency.current-execution');
const registry = globalThis as { [slot]?: { storage: AsyncLocalStorage<Execution>; tracking: boolean } };
const state = (registry[slot] ??= { storage: new AsyncLocalStorage<Execution>(), tracking: false });

/**
 * Keep the current execution in an `AsyncLocalStorage` from now on, so
 * `currentExecution()` works anywhere below an action or a handler. Off
 * until asked for: on Node 20, an active `AsyncLocalStorage` costs every
 * promise of the process (about 25 µs of CPU per HTTP request, measured),
 * and an action or a handler is handed its execution for free (the
 * action's argument, `@CurrentExecution()`).
 *
 * @public
 */
export function trackCurrentExecution(): void {
  state.tracking = true;
}

/**
 * The execution the calling code runs under, or `undefined` outside one
 * (an unprotected route, a replay, a request without a key under `optional`).
 *
 * @throws Error when tracking is off (see {@link trackCurrentExecution};
 *   `IdempotencyModule`'s `currentExecution: true`): a silent `undefined`
 *   would turn fencing off without anyone noticing.
 * @example
 * const execution = currentExecution();
 * await ledger.charge(order, { recordKey: execution?.recordKey, epoch: execution?.epoch });
 *
 * @public
 */
export function currentExecution(): Execution | undefined {
  if (!state.tracking) {
    throw new Error(
      'currentExecution() is off: turn it on with trackCurrentExecution() (IdempotencyModule: currentExecution: true), ' +
        "or take the execution from the action's argument or @CurrentExecution()",
    );
  }
  return state.storage.getStore();
}

/** Run `fn` with `execution` as the current one, for everything it awaits (when tracking is on). */
export function runInExecution<T>(execution: Execution, fn: () => T): T {
  return state.tracking ? state.storage.run(execution, fn) : fn();
}
