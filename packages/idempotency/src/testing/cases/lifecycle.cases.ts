import { assertMatch } from '../assert-match';
import { charge, newKey, type AddCase } from '../case-context';

/**
 * What `IdempotencyModule` calls around the store's life: `connect()` at
 * boot, on a store that may already be connected, and `ping()` for health.
 * Both are optional; a store without them passes trivially.
 */
export function lifecycleCases(it: AddCase): void {
  it('connects again without harm, answers ping(), and serves claims after both', async (setup) => {
    const { store, coordinator } = await setup();
    await store.connect?.();
    await store.connect?.();
    await store.ping?.();
    assertMatch(await coordinator.run(charge(newKey()), async () => ({ statusCode: 201 })), { replayed: false });
  });
}
