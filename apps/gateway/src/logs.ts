import type { AttemptEvent } from '@idempotency-chain/http-client';
import { headerKeyHash, HeaderName } from '@idempotency-chain/idempotency';
import type { Params } from 'nestjs-pino';
import type { Logger } from 'pino';

/**
 * Structured JSON logs (nestjs-pino): one line per request, per outbound
 * attempt (`logAttempts`) and per idempotency decision (`LoggingObserver`).
 * They carry the key's hash, never the raw key or a body.
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

/** Logs every outbound attempt of the http-client as `{ event: 'attempt', ... }`. */
export function logAttempts(logger: Logger): (event: AttemptEvent) => void {
  return (event) => logger.info({ event: 'attempt', ...event }, `attempt ${event.attempt} ${event.outcome}`);
}
