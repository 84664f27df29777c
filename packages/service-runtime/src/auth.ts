import { createHash, timingSafeEqual } from 'node:crypto';
import { type CanActivate, type ExecutionContext, Inject, Injectable, type Provider, UnauthorizedException } from '@nestjs/common';
import { ConfigError } from './config-error';

/**
 * Who may call a service: each token it accepts, with the principal the
 * token names (the calling service).
 */
export type Credentials = ReadonlyMap<string, string>;

/** Shortest and longest token accepted in the configuration: a short one is guessable, a long one is a mistake. */
export const TOKEN_LENGTH = { min: 16, max: 256 } as const;

/**
 * `token`, checked as a configured token. The message names the variable and
 * what is allowed, never the value: it is a secret.
 */
function checkToken(name: string, token: unknown): string {
  if (typeof token !== 'string' || token.length < TOKEN_LENGTH.min || token.length > TOKEN_LENGTH.max || /[^\x21-\x7e]/.test(token)) {
    throw new ConfigError(
      `${name} is not valid: expected tokens of ${TOKEN_LENGTH.min} to ${TOKEN_LENGTH.max} printable characters, no spaces`,
    );
  }
  return token;
}

/** The one token of `name` (a service token shared by two neighbours), naming `principal`. */
export function serviceToken(name: string, raw: string | undefined): string {
  if (raw === undefined || raw === '') throw new ConfigError(`${name} is not set: expected the service token of this hop`);
  return checkToken(name, raw);
}

/**
 * The token a request presents: `Authorization: Bearer <token>`, else
 * `X-Api-Key: <token>`; none when it presents neither.
 */
export function presentedToken(headers: Record<string, string | string[] | undefined>): string | undefined {
  const authorization = headers.authorization;
  if (typeof authorization === 'string') {
    const bearer = /^Bearer +(\S+)$/i.exec(authorization);
    return bearer?.[1];
  }
  const apiKey = headers['x-api-key'];
  return typeof apiKey === 'string' && apiKey !== '' ? apiKey : undefined;
}

const digest = (token: string) => createHash('sha256').update(token).digest();

/**
 * The principal `token` names, or `undefined`. Every configured token is
 * compared, each in constant time on its SHA-256 (equal lengths whatever
 * was sent), so the time taken says nothing of how close a guess came, nor
 * which token matched.
 */
export function principalOf(credentials: Credentials, token: string | undefined): string | undefined {
  if (token === undefined) return undefined;
  const presented = digest(token);
  let principal: string | undefined;
  for (const [known, name] of credentials) {
    if (timingSafeEqual(digest(known), presented)) principal = name;
  }
  return principal;
}

/** Injection token of the `Credentials` a service's `CallerGuard` checks. */
export const CALLER_CREDENTIALS = Symbol('CALLER_CREDENTIALS');

/** The `CALLER_CREDENTIALS` provider, for a module whose controllers use `CallerGuard`. */
export function callerCredentials(credentials: Credentials): Provider {
  return { provide: CALLER_CREDENTIALS, useValue: credentials };
}

/** The authenticated caller, as `CallerGuard` leaves it on the request (`request.user`, the Passport convention). */
export interface Caller {
  /** The principal its token names; the idempotency scope is `user:<id>` (`principalScope`). */
  id: string;
}

/**
 * Lets a request through only with a token of the service's credentials,
 * and leaves its principal on the request as `request.user` ({@link Caller}),
 * where `principalScope` reads it. Guards run before interceptors, so a
 * request refused here (401, `WWW-Authenticate: Bearer`) never reaches the
 * idempotency interceptor: it claims, reads and writes no record. The token
 * is never logged.
 */
@Injectable()
export class CallerGuard implements CanActivate {
  constructor(@Inject(CALLER_CREDENTIALS) private readonly credentials: Credentials) {}

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const request = http.getRequest<{ headers: Record<string, string | string[] | undefined>; user?: Caller }>();
    const principal = principalOf(this.credentials, presentedToken(request.headers));
    if (principal === undefined) {
      http.getResponse<{ header(name: string, value: string): unknown }>().header('www-authenticate', 'Bearer');
      throw new UnauthorizedException('Present a valid token: Authorization: Bearer <token>, or X-Api-Key: <token>');
    }
    request.user = { id: principal };
    return true;
  }
}
