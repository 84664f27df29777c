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
 *
 * @public
 */
export type Scope = ScopeResolver | 'shared';

/**
 * Returns the caller's principal or tenant for a request, or `undefined`.
 * Type what it returns (`account:acct-7`, as `principalScope` does): the
 * scope is also what the outbound keys of the request are derived with.
 *
 * @public
 */
export type ScopeResolver = (context: ExecutionContext) => string | undefined;

/**
 * Fields of an authenticated principal that identify it, first found wins,
 * each with the kind of principal it names. The kind is part of the scope:
 * a user 42 and a subject 42 are different callers.
 */
const PRINCIPAL_ID_FIELDS = [
  ['id', 'user'],
  ['userId', 'user'],
  ['sub', 'subject'],
] as const;

/**
 * The default scope: the authenticated principal a guard left on the
 * request (`request.user`, the Passport convention), typed by what
 * identifies it, so principals of different kinds never share a scope, and
 * within its tenant when it names one (ids are often unique only there):
 *
 * | `request.user`                     | scope                    |
 * |------------------------------------|--------------------------|
 * | `{ id: 42 }`                       | `user:42`                |
 * | `{ userId: '42' }`                 | `user:42`                |
 * | `{ sub: '42' }`                    | `subject:42`             |
 * | `{ tenantId: 'acme' }`             | `tenant:acme`            |
 * | `{ id: 7, tenantId: 'acme' }`      | `tenant:acme/user:7`     |
 * | `'42'`                             | `principal:42`           |
 *
 * The first of `id`, `userId`, `sub` found names the principal. Each value
 * is percent-encoded (`encodeURIComponent`), so no value can spell another
 * scope's separators. `undefined` (the request is refused) when there is
 * nothing to name. A resolver of your own should type its scopes the same
 * way (`account:${id}`).
 *
 * @example
 * IdempotencyModule.forRoot({ service: 'payments', store, scope: principalScope })
 *
 * @public
 */
export const principalScope: ScopeResolver = (context) => {
  // A message's `switchToHttp()` is its payload, which anyone sends: only an HTTP request (a GraphQL operation's included) has a user.
  const type = context.getType<string>();
  const request = type === 'http' || type === 'graphql' ? context.switchToHttp().getRequest<{ user?: unknown } | undefined>() : undefined;
  const user = request?.user;
  if (typeof user === 'string') return user ? `principal:${encodeURIComponent(user)}` : undefined;
  if (typeof user !== 'object' || user === null) return undefined;
  const fields = user as Record<string, unknown>;
  const tenant = identifier(fields.tenantId);
  for (const [field, kind] of PRINCIPAL_ID_FIELDS) {
    const id = identifier(fields[field]);
    if (id !== undefined) return tenant === undefined ? `${kind}:${id}` : `tenant:${tenant}/${kind}:${id}`;
  }
  return tenant === undefined ? undefined : `tenant:${tenant}`;
};

/** A non-empty string or a number, percent-encoded; anything else names nobody. */
function identifier(value: unknown): string | undefined {
  return (typeof value === 'string' && value !== '') || typeof value === 'number' ? encodeURIComponent(value) : undefined;
}
