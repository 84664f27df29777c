import { type CanActivate, type ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { PaymentsConfig } from './config.js';

const digest = (token: string) => createHash('sha256').update(token).digest();

/**
 * The hop's service token, `PAYMENTS_TOKEN`, as the HTTP guard and the
 * queue consumer check it: compared in constant time on its SHA-256, never
 * logged.
 */
@Injectable()
export class ServiceToken {
  private readonly token: Buffer;

  constructor(config: ConfigService<PaymentsConfig, true>) {
    this.token = digest(config.get('PAYMENTS_TOKEN', { infer: true }));
  }

  /** The token of `Bearer <token>`, when `authorization` is one. */
  static bearer(authorization: unknown): string | undefined {
    return typeof authorization === 'string' ? /^Bearer +(\S+)$/i.exec(authorization)?.[1] : undefined;
  }

  /** Whether `presented` is the token. */
  matches(presented: unknown): boolean {
    return typeof presented === 'string' && presented !== '' && timingSafeEqual(digest(presented), this.token);
  }
}

/**
 * Lets a request through only with the hop's service token, `PAYMENTS_TOKEN`,
 * as `Authorization: Bearer <token>` (or `X-Api-Key: <token>`): only orders
 * calls payments, and the ledger it reads back is every customer's. Guards
 * run before interceptors, so a request refused here (401, `WWW-Authenticate:
 * Bearer`) claims, reads and writes no idempotency record. Compared in
 * constant time on its SHA-256; never logged.
 */
@Injectable()
export class ServiceTokenGuard implements CanActivate {
  constructor(private readonly token: ServiceToken) {}

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const { headers } = http.getRequest<{ headers: Record<string, string | string[] | undefined> }>();
    const presented = typeof headers.authorization === 'string' ? ServiceToken.bearer(headers.authorization) : headers['x-api-key'];
    if (!this.token.matches(presented)) {
      http.getResponse<{ header(name: string, value: string): unknown }>().header('www-authenticate', 'Bearer');
      throw new UnauthorizedException('Present the service token: Authorization: Bearer <token>');
    }
    return true;
  }
}
