import type { IdempotentMetadata } from './idempotency.options';

/** A handler `@Idempotent` wrapped: what the wrapper tells the runner about itself. */
export interface ProtectedHandler {
  readonly name: string;
  readonly metadata: IdempotentMetadata;
}

const handlers = new WeakMap<object, Map<string, ProtectedHandler>>();

/** Remember that `prototype[name]` is protected (for the checks made at boot). */
export function registerProtected(prototype: object, name: string, handler: ProtectedHandler): void {
  let byName = handlers.get(prototype);
  if (!byName) handlers.set(prototype, (byName = new Map()));
  byName.set(name, handler);
}

/**
 * The protected handler `prototype` (or a prototype it inherits from) has
 * under `name`, whatever decorators wrapped it again since.
 */
export function protectedRoute(prototype: object, name: string): ProtectedHandler | undefined {
  for (let level: object | null = prototype; level && level !== Object.prototype; level = Object.getPrototypeOf(level) as object | null) {
    const found = handlers.get(level)?.get(name);
    if (found) return found;
  }
  return undefined;
}
