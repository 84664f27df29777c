import type { OperationPolicy } from '../policy';
import type { KeyMode } from './idempotency.options';
import type { Scope } from './scope';

/**
 * What `@Idempotent` declares on one handler, as written: the handler's
 * name, the operation and the decorator's options, nothing resolved yet.
 * `IdempotentRoutes` resolves it once at boot, per controller, into the
 * `IdempotentRoute` every call of the handler uses (module defaults
 * applied, policy merged over the operation's and checked, scope decided).
 */
export interface IdempotentDeclaration {
  /** The handler's method name. */
  readonly name: string;
  readonly operation: string;
  readonly keyMode?: KeyMode;
  readonly fingerprintFields?: string[];
  readonly scope?: Scope;
  /** Only what the decorator overrides over the operation's policy. */
  readonly policy: Partial<OperationPolicy>;
}

const declarations = new WeakMap<object, Map<string, IdempotentDeclaration>>();

/** Remember that `prototype[name]` is protected (for the checks made at boot). */
export function registerDeclaration(prototype: object, declaration: IdempotentDeclaration): void {
  let byName = declarations.get(prototype);
  if (!byName) declarations.set(prototype, (byName = new Map()));
  byName.set(declaration.name, declaration);
}

/**
 * What `@Idempotent` declared on `prototype` (or a prototype it inherits
 * from) under `name`, whatever decorators wrapped the handler again since.
 */
export function declarationOf(prototype: object, name: string): IdempotentDeclaration | undefined {
  for (let level: object | null = prototype; level && level !== Object.prototype; level = Object.getPrototypeOf(level) as object | null) {
    const found = declarations.get(level)?.get(name);
    if (found) return found;
  }
  return undefined;
}
