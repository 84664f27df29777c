import type { AttemptEvent } from '@idempotency-chain/http-client';
import { hashKey, type IdempotencyEvent, type IdempotencyObserver } from '@idempotency-chain/idempotency';
import type { Params } from 'nestjs-pino';
import type { Logger } from 'pino';
import type { ServiceConfig } from './config';

/**
 * Structured JSON logs: one line per request, per outbound attempt and per
 * idempotency decision. They carry the key's hash, never the raw key or a
 * body, and they are what the scenario runner draws its diagrams from.
 */
export function loggerParams(config: ServiceConfig): Params {
  return {
    pinoHttp: {
      level: config.logLevel,
      base: { service: config.service },
      quietReqLogger: true,
      serializers: {
        req: (req: { method: string; url: string; headers: Record<string, string | undefined> }) => ({
          method: req.method,
          url: req.url.split('?')[0],
          attempt: Number(req.headers['request-attempt'] ?? 1),
          keyHash: req.headers['idempotency-key'] ? hashKey(req.headers['idempotency-key']) : undefined,
        }),
        res: (res: { statusCode: number; headers?: Record<string, unknown> }) => ({
          statusCode: res.statusCode,
          replayed: res.headers?.['idempotent-replayed'] === 'true' || undefined,
        }),
      },
      customSuccessMessage: () => 'request completed',
      customErrorMessage: () => 'request failed',
      customAttributeKeys: { responseTime: 'durationMs' },
    },
  };
}

/** Logs every decision of the idempotency coordinator. */
export function loggingObserver(logger: Logger): IdempotencyObserver {
  return {
    record: ({ error, ...event }: IdempotencyEvent) =>
      logger.info({ event: 'idempotency', ...event, error: error ? String(error) : undefined }, `idempotency ${event.outcome}`),
  };
}

/** Logs every outbound attempt of the http-client. */
export function attemptLogger(logger: Logger): (event: AttemptEvent) => void {
  return (event) => logger.info({ event: 'attempt', ...event }, `attempt ${event.attempt} ${event.outcome}`);
}
