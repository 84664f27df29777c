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

/**
 * Returns the caller's principal or tenant for a request, or `undefined`.
 * Type what it returns (`account:acct-7`, as `principalScope` does): the
 * scope is also what the outbound keys of the request are derived with.
 */
export type ScopeResolver = (context: ExecutionContext) => string | undefined;

/**
 * Fields of an authenticated principal that identify it, first found wins,
 * each with the kind of principal it names. The kind is part of the scope:
 * a user 42 and a tenant 42 are different callers.
 */
const PRINCIPAL_ID_FIELDS = [
  ['id', 'user'],
  ['userId', 'user'],
  ['sub', 'subject'],
  ['tenantId', 'tenant'],
] as const;

/**
 * The default scope: the authenticated principal a guard left on the
 * request (`request.user`, the Passport convention), typed by what
 * identifies it, so principals of different kinds never share a scope:
 *
 * | `request.user`      | scope           |
 * |---------------------|-----------------|
 * | `{ id: 42 }`        | `user:42`       |
 * | `{ userId: '42' }`  | `user:42`       |
 * | `{ sub: '42' }`     | `subject:42`    |
 * | `{ tenantId: '42' }`| `tenant:42`     |
 * | `'42'`              | `principal:42`  |
 *
 * The first of `id`, `userId`, `sub`, `tenantId` found wins. `undefined`
 * (the request is refused) when there is none. A resolver of your own
 * should type its scopes the same way (`account:${id}`).
 *
 * @example
 * IdempotencyModule.forRoot({ service: 'payments', store, scope: principalScope })
 */
export const principalScope: ScopeResolver = (context) => {
  const request = context.getType() === 'http' ? context.switchToHttp().getRequest<{ user?: unknown }>() : undefined;
  const user = request?.user;
  if (typeof user === 'string') return user ? `principal:${user}` : undefined;
  if (typeof user !== 'object' || user === null) return undefined;
  for (const [field, kind] of PRINCIPAL_ID_FIELDS) {
    const value = (user as Record<string, unknown>)[field];
    if ((typeof value === 'string' && value !== '') || typeof value === 'number') return `${kind}:${value}`;
  }
  return undefined;
};
