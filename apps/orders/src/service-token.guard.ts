import { type CanActivate, type ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { OrdersConfig } from './config.js';

const digest = (token: string) => createHash('sha256').update(token).digest();

/**
 * Lets a request through only with the hop's service token, `ORDERS_TOKEN`,
 * as `Authorization: Bearer <token>` (or `X-Api-Key: <token>`): only the
 * gateway calls orders. Guards run before interceptors, so a request refused
 * here (401, `WWW-Authenticate: Bearer`) claims, reads and writes no
 * idempotency record. Compared in constant time on its SHA-256; never logged.
 */
@Injectable()
export class ServiceTokenGuard implements CanActivate {
  private readonly token: Buffer;

  constructor(config: ConfigService<OrdersConfig, true>) {
    this.token = digest(config.get('ORDERS_TOKEN', { infer: true }));
  }

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const { headers } = http.getRequest<{ headers: Record<string, string | string[] | undefined> }>();
    const presented =
      typeof headers.authorization === 'string' ? /^Bearer +(\S+)$/i.exec(headers.authorization)?.[1] : headers['x-api-key'];
    if (typeof presented !== 'string' || presented === '' || !timingSafeEqual(digest(presented), this.token)) {
      http.getResponse<{ header(name: string, value: string): unknown }>().header('www-authenticate', 'Bearer');
      throw new UnauthorizedException('Present the service token: Authorization: Bearer <token>');
    }
    return true;
  }
}
