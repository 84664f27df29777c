import { latch } from '../test/support/async';
import { IdempotencyCoordinator, type RunRequest } from './coordinator';
import { InFlightError, isIdempotencyError, StoreUnavailableError } from './errors';
import { MemoryStore } from './memory-store';
import type { ClaimRequest, ClaimResult } from './store';

/**
 * Requests waiting on one held key under a short lease, on the memory store
 * and a fake clock: the lease ends every 3 s of it, and what each waiter
 * costs the store is counted in claims.
 */
const LEASE_MS = 3_000;
const request: RunRequest = {
  operation: 'payments.charge',
  key: 'the-key',
  fingerprint: 'fp',
  policy: { leaseMs: LEASE_MS, maxWaitMs: 60_000 },
};

/** The memory store, counting the claims it answers and the waits it is asked for. */
class CountingStore extends MemoryStore {
  claims = 0;
  readonly waits: AbortSignal[] = [];
  failClaims = false;
  override async claim(claim: ClaimRequest): Promise<ClaimResult> {
    this.claims += 1;
    if (this.failClaims) throw new Error('ECONNRESET');
    return super.claim(claim);
  }
  override waitForChange(recordKey: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (signal) this.waits.push(signal);
    return super.waitForChange(recordKey, timeoutMs, signal);
  }
}

let store: CountingStore;
let coordinator: IdempotencyCoordinator;
beforeEach(() => {
  vi.useFakeTimers();
  store = new CountingStore();
  coordinator = new IdempotencyCoordinator({ service: 'payments', store, replayCache: false });
});
afterEach(async () => {
  await store.close();
  vi.useRealTimers();
});

/** Each run's value or error, so none is left unhandled while the clock moves. */
function settled<T>(run: Promise<T>): Promise<T | unknown> {
  return run.then(
    (value) => value,
    (error: unknown) => error,
  );
}

/** `count` duplicates of `request`, started once the key is held; `runs()` counts the duplicates that executed. */
function duplicates(count: number, overrides: Partial<RunRequest>[] = []) {
  let runs = 0;
  const answers = Array.from({ length: count }, (_, i) =>
    settled(coordinator.run({ ...request, ...overrides[i] }, async () => ((runs += 1), { chargeId: 'a duplicate ran' }))),
  );
  return { answers: Promise.all(answers), runs: () => runs };
}

/** A record held by an owner that died: no heartbeat renews it, its lease ends in `LEASE_MS`. */
async function heldByADeadOwner(): Promise<void> {
  const recordKey = coordinator.recordKey(request.operation, '', request.key);
  expect(await store.claim({ recordKey, fingerprint: 'fp', owner: 'dead', leaseMs: LEASE_MS })).toMatchObject({ status: 'claimed' });
}

test('1,000 waiters on a key whose holder renews its lease cost one claim per lease, not one each', async () => {
  const gate = latch();
  const holder = settled(coordinator.run(request, async () => (await gate.promise, { chargeId: 'ch_1' })));
  await vi.advanceTimersByTimeAsync(0);
  const { answers, runs } = duplicates(1_000);
  await vi.advanceTimersByTimeAsync(0);
  const claimsBefore = store.claims;
  expect(claimsBefore).toBe(1_001); // every duplicate found the key held once

  await vi.advanceTimersByTimeAsync(30_000); // ten leases, the heartbeat renewing each
  // One claim per lease (about 10); one per waiter per lease would be some 10,000.
  expect(store.claims - claimsBefore).toBeLessThanOrEqual(30);

  gate.open();
  await vi.advanceTimersByTimeAsync(0);
  expect(await holder).toMatchObject({ value: { chargeId: 'ch_1' }, replayed: false, waited: false });
  expect((await answers).every((answer) => (answer as { replayed?: boolean }).replayed === true)).toBe(true);
  expect(runs()).toBe(0);
});

test('when the holder’s lease runs out, exactly one waiter takes over and the others replay its answer', async () => {
  await heldByADeadOwner();
  const { answers, runs } = duplicates(100);
  await vi.advanceTimersByTimeAsync(LEASE_MS + 10);
  const all = (await answers) as Array<{ value: unknown; replayed: boolean; waited: boolean }>;
  expect(runs()).toBe(1);
  expect(all.filter((answer) => !answer.replayed)).toHaveLength(1);
  expect(all.every((answer) => answer.waited && (answer.value as { chargeId: string }).chargeId === 'a duplicate ran')).toBe(true);
  expect(store.claims).toBeLessThanOrEqual(100 + 3); // each duplicate's first claim, then one for all of them
});

test('a waiter still leaves at its own deadline, and on its own abort, while the others wait on', async () => {
  await heldByADeadOwner();
  const gone = new AbortController();
  const { answers, runs } = duplicates(3, [{ policy: { ...request.policy, maxWaitMs: 1_000 } }, { signal: gone.signal }, {}]);
  await vi.advanceTimersByTimeAsync(500);
  gone.abort();
  await vi.advanceTimersByTimeAsync(600);
  await vi.advanceTimersByTimeAsync(LEASE_MS);
  const [timedOut, abandoned, waited] = await answers;
  expect(isIdempotencyError(timedOut, InFlightError)).toBe(true);
  expect(abandoned).toMatchObject({ name: 'AbortError' });
  expect(waited).toMatchObject({ replayed: false, waited: true });
  expect(runs()).toBe(1);
});

test('when every waiter of a key has left, its store wait is stopped', async () => {
  await heldByADeadOwner();
  const gone = new AbortController();
  const { answers } = duplicates(
    10,
    Array.from({ length: 10 }, () => ({ signal: gone.signal })),
  );
  await vi.advanceTimersByTimeAsync(100);
  expect(store.waits).toHaveLength(1); // one wait for all ten
  gone.abort();
  await vi.advanceTimersByTimeAsync(0);
  expect((await answers).every((answer) => (answer as Error).name === 'AbortError')).toBe(true);
  expect(store.waits[0]?.aborted).toBe(true);
  expect(vi.getTimerCount()).toBe(1); // the memory store's sweeper alone
});

test('a re-check claim that fails fails every waiter closed: none runs next to a holder it saw', async () => {
  await heldByADeadOwner();
  const { answers, runs } = duplicates(5);
  await vi.advanceTimersByTimeAsync(100);
  store.failClaims = true;
  const claimsBefore = store.claims;
  await vi.advanceTimersByTimeAsync(LEASE_MS);
  expect((await answers).every((answer) => isIdempotencyError(answer, StoreUnavailableError))).toBe(true);
  expect(store.claims - claimsBefore).toBe(1);
  expect(runs()).toBe(0);
});
