import type { ExecutionContext } from '@nestjs/common';

/**
 * Whose records a request may see: a caller's key is looked up only among
 * the records of its own scope, so one caller can never replay another's
 * stored response, or learn that a key exists, by presenting the same key.
 *
 * A resolver returns the caller's principal or tenant (`undefined` when it
 * cannot tell, which refuses the request); `'shared'` puts every caller in
 * one scope, for a service whose only callers are trusted peers that share
 * keys on purpose (a hop behind your own gateway).
 */
export type Scope = ScopeResolver | 'shared';

/** Returns the caller's principal or tenant for a request, or `undefined`. */
export type ScopeResolver = (context: ExecutionContext) => string | undefined;

/** Fields of an authenticated principal that identify it, first found wins. */
const PRINCIPAL_ID_FIELDS = ['id', 'sub', 'userId', 'tenantId'] as const;

/**
 * The default scope: the authenticated principal a guard left on the
 * request (`request.user`, the Passport convention), identified by its
 * `id`, `sub`, `userId` or `tenantId`, or the principal itself when it is a
 * string. `undefined` (the request is refused) when there is none.
 *
 * @example
 * IdempotencyModule.forRoot({ service: 'payments', store, scope: principalScope })
 */
export const principalScope: ScopeResolver = (context) => {
  const request = context.getType() === 'http' ? context.switchToHttp().getRequest<{ user?: unknown }>() : undefined;
  const user = request?.user;
  if (typeof user === 'string') return user || undefined;
  if (typeof user !== 'object' || user === null) return undefined;
  for (const field of PRINCIPAL_ID_FIELDS) {
    const value = (user as Record<string, unknown>)[field];
    if ((typeof value === 'string' && value !== '') || typeof value === 'number') return String(value);
  }
  return undefined;
};
