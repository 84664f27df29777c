import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { eventually, latch } from '../test/support/async';
// Through the entries a user imports, subscribed by name as an APM does.
import {
  hashKey,
  IdempotencyCoordinator,
  InFlightError,
  isIdempotencyError,
  KeyReusedError,
  LeaseLostError,
  MemoryStore,
  StoreUnavailableError,
  type IdempotencyEvent,
  type IdempotencyStore,
  type RunRequest,
} from '@idempotency-chain/idempotency';
import { IdempotencyChannel } from '@idempotency-chain/idempotency/diagnostics-channel';

const OPERATION = 'payments.charge';
const KEY = 'order-42-attempt-key';
const BODY = { chargeId: 'ch_secret_answer' };
const CLAIM = ['start', 'end', 'asyncStart', 'asyncEnd', 'error'].map((event) => `tracing:${IdempotencyChannel.Claim}:${event}`);

/** Every message on the package's channels, in the order published, each as it was at that moment. */
function listen(): { heard: Array<{ channel: string } & Record<string, unknown>>; stop: () => void } {
  const heard: Array<{ channel: string } & Record<string, unknown>> = [];
  const hear = (message: unknown, name: string | symbol) => heard.push({ channel: String(name), ...(message as object) });
  const names = [IdempotencyChannel.Outcome, ...CLAIM];
  for (const name of names) subscribe(name, hear);
  return { heard, stop: () => names.forEach((name) => unsubscribe(name, hear)) };
}

/** The channel, and the outcome or the claim's status, of each message. */
const sequence = (heard: Array<Record<string, unknown>>) =>
  heard.map(({ channel, outcome, result }) =>
    [String(channel).replace(/^(tracing:)?idempotency-chain:/, ''), outcome ?? (result as { status?: string } | undefined)?.status]
      .filter(Boolean)
      .join(' '),
  );

/** What one traced claim the store answered with `status`, then the decision `outcome`, publish. */
const claimThen = (status: string, outcome: string) => [
  'claim:start',
  'claim:end',
  `claim:asyncStart ${status}`,
  `claim:asyncEnd ${status}`,
  `outcome ${outcome}`,
];

let store: MemoryStore;
let coordinator: IdempotencyCoordinator;
let listening: ReturnType<typeof listen>;

beforeEach(() => {
  store = new MemoryStore();
  // No observer: the channels are published on whatever the app wired. No replay cache: every replay is a claim.
  coordinator = new IdempotencyCoordinator({ service: 'payments', store, replayCache: false });
  listening = listen();
});
afterEach(async () => {
  listening.stop();
  await store.close();
});

const request = (extra: Partial<RunRequest> = {}): RunRequest => ({ operation: OPERATION, key: KEY, fingerprint: 'fp-1', ...extra });
const charge = async () => ({ statusCode: 201, body: BODY });

describe('the diagnostics channels', () => {
  it('trace a first execution’s claim and publish its outcome, with the key’s hash and no key or answer', async () => {
    const { epoch } = await coordinator.run(request(), charge);

    expect(sequence(listening.heard)).toEqual(claimThen('claimed', 'executed'));
    const keyHash = hashKey(KEY);
    expect(listening.heard[0]).toEqual({
      channel: `tracing:${IdempotencyChannel.Claim}:start`,
      service: 'payments',
      operation: OPERATION,
      keyHash,
    });
    expect(listening.heard[3]).toMatchObject({ result: { status: 'claimed', epoch } });
    expect(listening.heard[4]).toEqual({
      channel: IdempotencyChannel.Outcome,
      outcome: 'executed',
      service: 'payments',
      operation: OPERATION,
      keyHash,
      epoch,
    });
    expect(JSON.stringify(listening.heard)).not.toContain(KEY);
  });

  it('publish a replay: the claim finds the answer, which no message carries', async () => {
    await coordinator.run(request(), charge);
    listening.heard.length = 0;

    const replay = await coordinator.run(request(), charge);

    expect(replay.replayed).toBe(true);
    expect(sequence(listening.heard)).toEqual(claimThen('completed', 'replayed'));
    expect(listening.heard[3]?.result).toEqual({ status: 'completed' });
    expect(JSON.stringify(listening.heard)).not.toContain(BODY.chargeId);
    expect(JSON.stringify(listening.heard)).not.toContain('fp-1');
  });

  it('publish the conflicts: a duplicate in flight refused with 409, a reused key refused with 422', async () => {
    const gate = latch();
    const first = coordinator.run(request(), async () => (await gate.promise, charge()));
    await eventually(
      () => listening.heard.some(({ result }) => (result as { status?: string } | undefined)?.status === 'claimed'),
      'the first claim',
    );

    const inFlight = await coordinator.run(request({ policy: { inFlight: 'reject' } }), charge).catch((error: unknown) => error);
    gate.open();
    await first;
    const reused = await coordinator.run(request({ fingerprint: 'fp-2' }), charge).catch((error: unknown) => error);

    expect(isIdempotencyError(inFlight, InFlightError)).toBe(true);
    expect(isIdempotencyError(reused, KeyReusedError)).toBe(true);
    expect(sequence(listening.heard).filter((event) => event.startsWith('outcome') || event.includes('asyncEnd'))).toEqual([
      'claim:asyncEnd claimed',
      'claim:asyncEnd in_progress',
      'outcome rejected_in_flight',
      'outcome executed',
      'claim:asyncEnd completed',
      'outcome mismatched',
    ]);
  });

  it('publish a lost lease: the completion of an execution whose lease another claim took is refused', async () => {
    const recordKey = coordinator.recordKey(OPERATION, '', KEY);
    const takenOver = latch();
    const run = coordinator.run(request({ policy: { leaseMs: 100, heartbeatMs: 0 } }), async () => (await takenOver.promise, charge()));
    await eventually(
      async () => (await store.claim({ recordKey, fingerprint: 'fp-1', owner: 'next holder', leaseMs: 60_000 })).status === 'claimed',
      'the lease to lapse',
    );
    takenOver.open();

    const error = await run.catch((e: unknown) => e);

    expect(isIdempotencyError(error, LeaseLostError)).toBe(true);
    expect(sequence(listening.heard)).toEqual(claimThen('claimed', 'stale_completion_refused'));
    expect(listening.heard[4]?.epoch).toBe((listening.heard[3]?.result as { epoch: number }).epoch);
  });

  it('trace a claim the store rejects on the error channel, then publish the store error', async () => {
    const down = Object.assign(Object.create(store) as IdempotencyStore, {
      claim: () => Promise.reject(new Error('ECONNREFUSED 127.0.0.1:6379')),
    });
    const unreachable = new IdempotencyCoordinator({ service: 'payments', store: down });

    const error = await unreachable.run(request(), charge).catch((e: unknown) => e);

    expect(isIdempotencyError(error, StoreUnavailableError)).toBe(true);
    expect(sequence(listening.heard)).toEqual([
      'claim:start',
      'claim:end',
      'claim:error',
      'claim:asyncStart',
      'claim:asyncEnd',
      'outcome store_error',
    ]);
    expect((listening.heard[2]?.error as Error).message).toBe('ECONNREFUSED 127.0.0.1:6379');
  });

  it('publish the events an observer gets, field for field', async () => {
    const observed: IdempotencyEvent[] = [];
    const observing = new IdempotencyCoordinator({
      service: 'payments',
      store,
      replayCache: false,
      observer: { record: (event) => observed.push(event) },
    });
    await observing.run(request(), charge);
    await observing.run(request(), charge);

    const published = listening.heard
      .filter(({ channel }) => channel === IdempotencyChannel.Outcome)
      .map(({ channel: _, ...message }) => message);
    expect(observed.map(({ outcome }) => outcome)).toEqual(['executed', 'replayed']);
    expect(published).toEqual(observed);
  });
});
