import { headerKeyHash, HeaderName } from '@idempotency-chain/idempotency';
import type { Params } from 'nestjs-pino';

/**
 * Structured JSON logs (nestjs-pino): one line per request, per message
 * (`MessageAckInterceptor`) and per idempotency decision
 * (`LoggingObserver`). They carry the key's hash, never the raw key or a body.
 */
export function jsonLogs(service: string, level: string): Params {
  return {
    pinoHttp: {
      level,
      base: { service },
      quietReqLogger: true,
      serializers: {
        req: (req: { method: string; url: string; headers: Record<string, string | undefined> }) => ({
          method: req.method,
          url: req.url.split('?')[0],
          attempt: Number(req.headers[HeaderName.RequestAttempt] ?? 1),
          keyHash: headerKeyHash(req.headers[HeaderName.IdempotencyKey]),
        }),
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
