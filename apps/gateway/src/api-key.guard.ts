import { type CanActivate, type ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { GatewayConfig } from './config.js';

/** The authenticated customer, as `ApiKeyGuard` leaves it on the request (`request.user`, the Passport convention). */
export interface Customer {
  /** The account its key names; `principalScope` makes the idempotency scope `user:<id>` of it. */
  id: string;
}

const digest = (token: string) => createHash('sha256').update(token).digest();

/**
 * Lets a request through only with a customer's key of `GATEWAY_API_KEYS`,
 * as `Authorization: Bearer <key>` or `X-Api-Key: <key>`, and leaves the
 * account it names on the request as `request.user` ({@link Customer}).
 * Guards run before interceptors, so a request refused here (401,
 * `WWW-Authenticate: Bearer`) never reaches the idempotency interceptor: it
 * claims, reads and writes no record. Every key is compared, each in
 * constant time on its SHA-256, so the time taken says nothing of how close a
 * guess came; the key is never logged.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly keys: ReadonlyArray<[digest: Buffer, account: string]>;

  constructor(config: ConfigService<GatewayConfig, true>) {
    this.keys = [...config.get('GATEWAY_API_KEYS', { infer: true })].map(([key, account]) => [digest(key), account]);
  }

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const request = http.getRequest<{ headers: Record<string, string | string[] | undefined>; user?: Customer }>();
    const presented = presentedKey(request.headers);
    let account: string | undefined;
    if (presented !== undefined) {
      const hash = digest(presented);
      for (const [known, name] of this.keys) if (timingSafeEqual(known, hash)) account = name;
    }
    if (account === undefined) {
      http.getResponse<{ header(name: string, value: string): unknown }>().header('www-authenticate', 'Bearer');
      throw new UnauthorizedException('Present a valid key: Authorization: Bearer <key>, or X-Api-Key: <key>');
    }
    request.user = { id: account };
    return true;
  }
}

/** `Authorization: Bearer <key>`, else `X-Api-Key: <key>`; none when the request presents neither. */
function presentedKey(headers: Record<string, string | string[] | undefined>): string | undefined {
  const authorization = headers.authorization;
  if (typeof authorization === 'string') return /^Bearer +(\S+)$/i.exec(authorization)?.[1];
  const apiKey = headers['x-api-key'];
  return typeof apiKey === 'string' && apiKey !== '' ? apiKey : undefined;
}
