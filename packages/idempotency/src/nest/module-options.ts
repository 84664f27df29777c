import type { IdempotencyModuleOptions, KeyMode } from './idempotency.options';

/** `maxResponseBytes` unless set: 1 MiB. */
export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;

const KEY_MODES: readonly KeyMode[] = ['required', 'optional', 'fingerprint', 'none'];

/** A mistyped option would quietly change what is protected: refuse it at boot, naming it. */
class InvalidOptionError extends TypeError {
  override name = 'InvalidOptionError';
}

export function checkKeyMode(keyMode: unknown, where: string): void {
  if (!KEY_MODES.includes(keyMode as KeyMode)) {
    throw new InvalidOptionError(`${where}: keyMode must be one of ${KEY_MODES.join(', ')} (got ${JSON.stringify(keyMode)})`);
  }
}

export function checkScope(scope: unknown, where: string): void {
  if (scope !== 'shared' && typeof scope !== 'function') {
    throw new InvalidOptionError(`${where}: scope must be a resolver function or 'shared' (got ${JSON.stringify(scope)})`);
  }
}

/** Check what the module was given; the policies are checked by the coordinator. */
export function checkModuleOptions(options: IdempotencyModuleOptions): void {
  const where = `IdempotencyModule (${String(options.service)})`;
  if (typeof options.service !== 'string' || options.service === '')
    throw new InvalidOptionError(`${where}: service must be a non-empty string`);
  if (typeof options.store?.claim !== 'function') throw new InvalidOptionError(`${where}: store must be an IdempotencyStore`);
  if (options.keyMode !== undefined) checkKeyMode(options.keyMode, where);
  if (options.scope !== undefined) checkScope(options.scope, where);
  const max = options.maxResponseBytes;
  if (max !== undefined && !(Number.isSafeInteger(max) && max > 0)) {
    throw new InvalidOptionError(`${where}: maxResponseBytes must be a positive whole number of bytes (got ${String(max)})`);
  }
  const budget = options.maxDecompressingBytes;
  if (budget !== undefined && !(Number.isSafeInteger(budget) && budget >= (max ?? DEFAULT_MAX_RESPONSE_BYTES))) {
    // Each decompression reserves maxResponseBytes: a smaller budget would refuse every one.
    throw new InvalidOptionError(
      `${where}: maxDecompressingBytes must be a whole number of bytes, at least maxResponseBytes (got ${String(budget)})`,
    );
  }
  const drain = options.drainTimeoutMs;
  if (drain !== undefined && !(Number.isFinite(drain) && drain >= 0)) {
    throw new InvalidOptionError(`${where}: drainTimeoutMs must be a number of milliseconds, 0 or more (got ${String(drain)})`);
  }
  for (const name of options.replayHeaders ?? []) {
    if (typeof name !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      throw new InvalidOptionError(`${where}: replayHeaders must be header names (got ${JSON.stringify(name)})`);
    }
  }
}
