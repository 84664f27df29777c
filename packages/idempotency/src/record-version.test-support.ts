import { randomUUID } from 'node:crypto';
import { IdempotencyCoordinator } from './coordinator';
import { RecordVersionError } from './errors';
import type { IdempotencyEvent } from './observer';
import type { IdempotencyStore } from './store';

/**
 * What the coordinator does with a record its store refuses for its format
 * version, `plant`ed under the record key of a request: the request fails
 * with `RecordVersionError` even when failing open, its action never runs,
 * and the observer hears `unreadable` with the error.
 */
export async function expectCoordinatorRefuses(store: IdempotencyStore, plant: (recordKey: string) => Promise<void>): Promise<void> {
  const events: IdempotencyEvent[] = [];
  const coordinator = new IdempotencyCoordinator({
    service: 'format',
    store,
    defaults: { onStoreFailure: 'fail-open' },
    observer: { record: (event) => events.push(event) },
  });
  const key = `k-${randomUUID()}`;
  await plant(coordinator.recordKey('charge', '', key));
  let ran = false;
  const failure = await coordinator
    .run({ operation: 'charge', key, fingerprint: 'fp' }, async () => {
      ran = true;
    })
    .catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(RecordVersionError);
  expect(ran).toBe(false);
  expect(events.map((e) => e.outcome)).toEqual(['unreadable']);
  expect(events[0]?.error).toBe(failure);
}
