import { headerKeyHash, HeaderName } from '@idempotency-chain/idempotency';
import type { Params } from 'nestjs-pino';
import type { ServiceConfig } from './config';

/**
 * Structured JSON logs (nestjs-pino): one line per request and per
 * idempotency decision. They carry the key's hash, never the
 * raw key or a body.
 */
export function serviceLogs(config: ServiceConfig): Params {
  return {
    pinoHttp: {
      level: config.logLevel,
      base: { service: config.service },
      quietReqLogger: true,
      serializers: {
        req: (req: { method: string; url: string; headers: Record<string, string | undefined> }) => {
          return {
            method: req.method,
            url: req.url.split('?')[0],
            attempt: Number(req.headers[HeaderName.RequestAttempt] ?? 1),
            keyHash: headerKeyHash(req.headers[HeaderName.IdempotencyKey]),
          };
        },
        res: (res: { statusCode: number; headers?: Record<string, unknown> }) => ({
          statusCode: res.statusCode,
          replayed: res.headers?.[HeaderName.Replayed] === 'true' || undefined,
        }),
      },
      customSuccessMessage: () => 'request completed',
      customErrorMessage: () => 'request failed',
      customAttributeKeys: { responseTime: 'durationMs' },
    },
  };
}
