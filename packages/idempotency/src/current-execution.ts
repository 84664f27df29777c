import { AsyncLocalStorage } from 'node:async_hooks';
import type { Execution } from './execution';

// One store per process, even when two copies of this package are loaded.
const slot = Symbol.for('idempotency-chain.idempotency.current-execution');
const registry = globalThis as { [slot]?: AsyncLocalStorage<Execution> };
const storage = (registry[slot] ??= new AsyncLocalStorage<Execution>());

/**
 * The execution the calling code runs under, or `undefined` outside one
 * (an unprotected route, a replay, a request without a key under `optional`).
 * Set around the action by `IdempotencyCoordinator.run` and around the
 * handler by the NestJS interceptor.
 *
 * @example
 * const execution = currentExecution();
 * await ledger.charge(order, { recordKey: execution?.recordKey, epoch: execution?.epoch });
 */
export function currentExecution(): Execution | undefined {
  return storage.getStore();
}

/** Run `fn` with `execution` as the current one, for everything it awaits. */
export function runInExecution<T>(execution: Execution, fn: () => T): T {
  return storage.run(execution, fn);
}
