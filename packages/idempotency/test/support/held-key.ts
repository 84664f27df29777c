import type { IdempotencyCoordinator, RunRequest, RunResult } from '../../src/coordinator';
import { eventually, latch } from './async';
import type { Recorder } from './recorder';

/**
 * A holder on `request`'s key, held until `release()`, and `count`
 * duplicates of it, returned once every one has found the key held (each
 * duplicate's result or error). `recorder` must be the coordinator's
 * observer: claims are counted off it.
 */
export async function duplicatesOfAHeldKey(coordinator: IdempotencyCoordinator, recorder: Recorder, request: RunRequest, count: number) {
  const gate = latch();
  const holder = coordinator.run(request, async () => (await gate.promise, { chargeId: 'ch_1' }));
  await eventually(() => recorder.claims === 1, 'the holder’s claim to be answered');
  const duplicates: Array<Promise<RunResult<unknown> | unknown>> = Array.from({ length: count }, () =>
    coordinator
      .run(request, async () => ({ chargeId: 'a duplicate ran' }))
      .then(
        (result) => result,
        (error: unknown) => error,
      ),
  );
  await eventually(() => recorder.claims >= count + 1, 'every duplicate to find the key held', { timeoutMs: 30_000 });
  return { holder, duplicates: Promise.all(duplicates), release: () => gate.open() };
}
