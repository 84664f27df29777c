import { AsyncLocalStorage } from 'node:async_hooks';
import type { ExecutionContext } from '../coordinator';

/**
 * The execution a handler runs under: its fencing `epoch` (pass it to the
 * protected resource so it refuses stale writers), the lease `signal`
 * (aborted when another attempt took the key over) and the `keyHash` for logs.
 */
export type IdempotentExecution = ExecutionContext;

/** @internal Set by the interceptor around the handler of a claimed execution. */
export const executionStorage = new AsyncLocalStorage<IdempotentExecution>();

/**
 * The idempotent execution the calling code runs under, or `undefined` outside
 * one (unprotected route, replay, no key under `optional`).
 *
 * @example
 * const execution = currentExecution();
 * await ledger.charge(order, { fence: execution?.epoch });
 */
export function currentExecution(): IdempotentExecution | undefined {
  return executionStorage.getStore();
}
