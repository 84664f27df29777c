import { charge, newKey, type ConformanceContext } from './context';

/**
 * What `IdempotencyModule` calls around the store's life: `connect()` at
 * boot, on a store that may already be connected, and `ping()` for health.
 * Both are optional; a store without them passes trivially.
 */
export function describeLifecycleCases({ setup }: ConformanceContext): void {
  it('connects again without harm, answers ping(), and serves claims after both', async () => {
    const { store, coordinator } = await setup();
    await store.connect?.();
    await store.connect?.();
    await store.ping?.();
    expect(await coordinator.run(charge(newKey()), async () => ({ statusCode: 201 }))).toMatchObject({ replayed: false });
  });
}
