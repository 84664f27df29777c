import { IdempotencyCoordinator, requestFingerprint, type IdempotencyStore } from '@idempotency-chain/idempotency';
import { randomUUID } from 'node:crypto';

/** A day: the retention the issue sizes a store for (1,000 checkouts/s for 24 h). */
export const DAY_MS = 24 * 60 * 60 * 1000;

/** What the checkout asks for; its fingerprint is what both libraries store. */
export const REQUEST_BODY = { orderId: 'order-bench', amountCents: 500, currency: 'EUR' };

/** A JSON answer body of exactly `bytes` bytes. */
function bodyOf(bytes: number): Record<string, unknown> {
  const base = { chargeId: 'ch_3f9a2c', orderId: 'order-bench', amountCents: 500, currency: 'EUR', status: 'captured', pad: '' };
  return { ...base, pad: 'x'.repeat(bytes - Buffer.byteLength(JSON.stringify(base))) };
}

/** The 200-byte answer body both libraries store. */
export const ANSWER_BODY = bodyOf(200);
export const ANSWER_BODY_BYTES = Buffer.byteLength(JSON.stringify(ANSWER_BODY));

/**
 * The answer as the NestJS integration stores it for that body: a JSON head
 * line with the status and the replayed headers, then the body as it went
 * on the wire (see `encodeAnswer` in the package's `nest/http-answer.ts`).
 */
export const STORED_ANSWER = `${JSON.stringify({ status: 201, headers: { 'content-type': 'application/json; charset=utf-8' } })}\n${JSON.stringify(ANSWER_BODY)}`;
export const STORED_ANSWER_BYTES = Buffer.byteLength(STORED_ANSWER);

const OPERATION = 'orders.create';

/** A coordinator whose every record is a completed checkout kept for a day. */
export function checkoutCoordinator(store: IdempotencyStore): IdempotencyCoordinator {
  return new IdempotencyCoordinator({ service: 'checkout', store, replayCache: false, defaults: { retentionMs: DAY_MS } });
}

/**
 * One completed record, written the way a first execution writes it: the
 * coordinator's claim (its record key, fingerprint and owner token), then
 * the completion with the stored answer. Resolves with the record key.
 */
export async function completeOne(coordinator: IdempotencyCoordinator, key = randomUUID(), answer = STORED_ANSWER): Promise<string> {
  const fingerprint = requestFingerprint({ method: 'POST', path: '/orders', body: { ...REQUEST_BODY, key } });
  const begun = await coordinator.begin({ operation: OPERATION, key, fingerprint });
  if (!begun.execution) throw new Error('a fresh key was not executed');
  if (!(await begun.execution.complete(answer))) throw new Error('a completion was refused');
  return coordinator.recordKey(OPERATION, '', key);
}

/** Run `operation` `count` times over `concurrency` loops. */
export async function repeat(count: number, concurrency: number, operation: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await operation(next++);
    }),
  );
}
