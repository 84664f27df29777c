import { randomUUID } from 'node:crypto';
import { IdempotencyCoordinator, type RunRequest } from '../../src/coordinator';
import { requestFingerprint } from '../../src/fingerprint';
import type { OperationPolicy } from '../../src/policy';
import type { ClaimResult, IdempotencyStore } from '../../src/store';
import { Recorder } from '../support/recorder';

/** A store under test, built fresh for every case. */
export interface StoreHarness {
  store: IdempotencyStore;
  /** Close the store and remove what the case left behind. */
  teardown(): Promise<void>;
  /** Make the store unreachable (only when the harness was asked for an outage). */
  outage?: { stop(): Promise<void> };
}

/** What a case needs from its harness. */
export interface HarnessRequest {
  /** The case stops the store: give it a store of its own, with `outage`. */
  outage?: boolean;
}

export type Harness = (request: HarnessRequest) => Promise<StoreHarness>;

/**
 * Bounds every wait that a working store ends by a signal. Generous: it
 * catches a hang or a missing wake-up, it does not measure speed. Harnesses
 * must not poll more often than this as a safety net, or a missing
 * completion signal would go unnoticed.
 */
export const SAFETY_MS = 5_000;
export const OPERATION = 'conformance.charge';

export type Charge = { statusCode: number; body: { chargeId: string; epoch?: number } };

/** One case's coordinator, wired to a fresh store and a recording observer. */
export interface CaseSetup {
  store: IdempotencyStore;
  coordinator: IdempotencyCoordinator;
  recorder: Recorder;
  outage: StoreHarness['outage'];
}

/** What every case file gets from the suite. */
export interface ConformanceContext {
  setup(request?: HarnessRequest): Promise<CaseSetup>;
}

/** A request for `key`; `body` changes the fingerprint. */
export function charge(key: string, extra: Partial<RunRequest> = {}, body: unknown = { amountCents: 500 }): RunRequest {
  const fingerprint = requestFingerprint({ method: 'POST', path: '/charges', body });
  return { operation: OPERATION, key, fingerprint, ...extra };
}

export const newKey = (): string => `key-${randomUUID()}`;

export const withPolicy = (policy: Partial<OperationPolicy>): Pick<RunRequest, 'policy'> => ({ policy });

export async function neverRuns(): Promise<Charge> {
  throw new Error('this action must not run');
}

/** The epoch of a successful claim; anything else fails the case. */
export function claimedEpoch(result: ClaimResult | undefined): number {
  if (result?.status !== 'claimed') throw new Error(`expected a claim, got ${JSON.stringify(result)}`);
  return result.epoch;
}

/** Build the context and register the teardown of whatever each case set up. */
export function conformanceContext(harness: Harness): ConformanceContext {
  let current: StoreHarness | undefined;
  afterEach(async () => {
    const done = current;
    current = undefined;
    await done?.teardown();
  });
  return {
    async setup(request = {}) {
      current = await harness(request);
      const recorder = new Recorder();
      const coordinator = new IdempotencyCoordinator({ service: 'conformance', store: current.store, observer: recorder });
      return { store: current.store, coordinator, recorder, outage: current.outage };
    },
  };
}
