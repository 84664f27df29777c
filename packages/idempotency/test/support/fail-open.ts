import { IdempotencyCoordinator } from '../../src/coordinator';
import type { IdempotencyStore } from '../../src/store';

/** A coordinator that runs a request unprotected when its store is down: what a refusal must never be taken for. */
export const failOpen = (store: IdempotencyStore) =>
  new IdempotencyCoordinator({ service: 'payments', store, defaults: { onStoreFailure: 'fail-open' } });

/** One charge under `key`, recorded in `ran` each time the action runs. */
export const charge = (coordinator: IdempotencyCoordinator, ran: string[], key: string) =>
  coordinator.run({ operation: 'payments.charge', key, fingerprint: 'f' }, async () => {
    ran.push(key);
    return 'charged';
  });

/** Charges `key` twice through `coordinator`: the first press runs the action, the second replays it. */
export async function expectChargedOnce(coordinator: IdempotencyCoordinator, ran: string[], key: string): Promise<void> {
  await expect(charge(coordinator, ran, key)).resolves.toMatchObject({ value: 'charged' });
  await expect(charge(coordinator, ran, key)).resolves.toMatchObject({ value: 'charged', replayed: true });
}

/** A store that is down, as an outage: under fail-open a charge runs, unprotected, once. */
export async function expectFailsOpen(store: IdempotencyStore): Promise<void> {
  const ran: string[] = [];
  await expect(charge(failOpen(store), ran, 'k1')).resolves.toMatchObject({ value: 'charged' });
  expect(ran).toEqual(['k1']);
}
