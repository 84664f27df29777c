import {
  hashKey,
  HeaderName,
  isIdempotencyError,
  LeaseLostError,
  parseIdempotencyKey,
  statusOutcome,
  StoredAnswerUnreadableError,
} from '@idempotency-chain/idempotency';
import { idempotencyErrorOf, statusOf } from '@idempotency-chain/idempotency/nest';
import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { RmqContext } from '@nestjs/microservices';
import { PinoLogger } from 'nestjs-pino';
import { setTimeout as sleep } from 'node:timers/promises';
import { defer, lastValueFrom, type Observable } from 'rxjs';

/** The parts of an amqplib delivery this file reads. */
export interface Delivery {
  fields: { deliveryTag: number; redelivered: boolean };
  properties: { headers?: Record<string, unknown> };
}

/** The parts of an amqplib channel this file uses. */
interface AckChannel {
  ack(message: Delivery): void;
  nack(message: Delivery, allUpTo: boolean, requeue: boolean): void;
}

/** What becomes of a delivery once its handler has finished. */
export type Settlement = 'ack' | 'requeue' | 'dead-letter';

/** How long a transient failure holds its message before handing it back, so it does not spin. */
const REQUEUE_PAUSE_MS = 500;

/**
 * What to do with a message whose handler failed with `error`:
 * - `ack`: a newer execution of the same key took the lease and owns the
 *   outcome (this one's transaction, the charge in it, was rolled back);
 *   this copy has nothing left to do;
 * - `dead-letter`: it can never succeed as sent (no key where one is
 *   required, a malformed key or body, a key reused with another body), or
 *   not before a human acts (its stored answer does not decrypt under the
 *   keyring), so it goes to `<queue>.dead` instead of looping;
 * - `requeue`: anything else (key in flight, store down, a crash of our
 *   own): the broker delivers it again and the idempotency record decides.
 */
export function settlementOf(error: unknown): Settlement {
  if (isIdempotencyError(idempotencyErrorOf(error), LeaseLostError)) return 'ack';
  // Its charge ran; the answer waits for the keyring to be put right, which no redelivery does.
  if (isIdempotencyError(idempotencyErrorOf(error), StoredAnswerUnreadableError)) return 'dead-letter';
  // An unexpected error carries no status: requeued, like a 500.
  const status = statusOf(error) ?? 500;
  const clientError = status >= 400 && status < 500;
  return clientError && !statusOutcome(status).retryable ? 'dead-letter' : 'requeue';
}

/**
 * Settles each message after its whole handler pipeline, the `@Idempotent`
 * interceptor included, has finished: applied at the class level, it runs
 * outside the route's interceptors, so by the time it acks, the charge is in
 * the ledger and the idempotency record is completed.
 *
 * ```text
 *  deliver ─► claim ─► ledger write ─► complete record ─► ack
 *                          │ crash here: no ack, the broker redelivers; the
 *                          │ record is still in progress, the redelivery waits
 *                          │ out the dead holder's lease and re-executes; the
 *                          │ ledger, keyed by the record, returns the charge
 *                          │ already written instead of writing another.
 *                                            │ crash here: the redelivery finds
 *                                            │ the record completed: replayed.
 * ```
 */
@Injectable()
export class MessageAckInterceptor implements NestInterceptor {
  constructor(private readonly logger: PinoLogger) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'rpc') return next.handle();
    const rmq = context.switchToRpc().getContext<RmqContext>();
    const message = rmq.getMessage() as Delivery;
    const channel = rmq.getChannelRef() as AckChannel;
    const delivery = {
      event: 'message',
      pattern: rmq.getPattern(),
      deliveryTag: message.fields.deliveryTag,
      redelivered: message.fields.redelivered,
      keyHash: keyHashOf(message),
    };
    return defer(async () => {
      this.logger.info({ ...delivery, phase: 'received' }, `message ${delivery.pattern} received`);
      try {
        const value = await lastValueFrom(next.handle(), { defaultValue: undefined });
        this.settle(channel, message, { ...delivery, settlement: 'ack' });
        return value;
      } catch (error) {
        const settlement = settlementOf(error);
        if (settlement === 'requeue') await sleep(REQUEUE_PAUSE_MS);
        this.settle(channel, message, { ...delivery, settlement, error: String(error) });
        if (settlement === 'ack') return undefined;
        throw error;
      }
    });
  }

  private settle(channel: AckChannel, message: Delivery, entry: { pattern: string; settlement: Settlement; error?: string }): void {
    const { pattern, settlement } = entry;
    try {
      if (settlement === 'ack') channel.ack(message);
      else channel.nack(message, false, settlement === 'requeue');
    } catch (cause) {
      // The channel is gone (connection lost, shutdown): the broker hands the
      // message to the next consumer, and its idempotency record answers there.
      this.logger.warn({ ...entry, phase: 'settled', settlement: 'lost', cause: String(cause) }, `message ${pattern} not settled`);
      return;
    }
    const log = settlement === 'ack' ? this.logger.info.bind(this.logger) : this.logger.warn.bind(this.logger);
    log({ ...entry, phase: 'settled' }, `message ${pattern} ${settlement}`);
  }
}

/** Hash of the message's key for the logs (never the key itself); none when absent or malformed. */
function keyHashOf(message: Delivery): string | undefined {
  const raw = message.properties.headers?.[HeaderName.IdempotencyKey];
  const value = Buffer.isBuffer(raw) ? raw.toString('latin1') : raw;
  if (typeof value !== 'string') return undefined;
  try {
    return hashKey(parseIdempotencyKey(value));
  } catch {
    return undefined;
  }
}
