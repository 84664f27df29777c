import { randomUUID } from 'node:crypto';
import { IdempotencyCoordinator, type RunRequest } from '../coordinator';
import { requestFingerprint } from '../fingerprint';
import type { OperationPolicy } from '../policy';
import type { ClaimResult } from '../store';
import type { HarnessRequest, StoreHarness } from './harness';
import { Recorder } from './recorder';

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
  store: StoreHarness['store'];
  coordinator: IdempotencyCoordinator;
  recorder: Recorder;
  outage: StoreHarness['outage'];
}

/** Builds a case's store from the harness; the suite tears it down when the case ends. */
export type Setup = (request?: HarnessRequest) => Promise<CaseSetup>;

/** Adds one case to its group: `body` gets the case's own `setup`. */
export type AddCase = (name: string, body: (setup: Setup) => Promise<void>) => void;

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

/** A coordinator over `store`, as every case builds it. */
export function caseSetup(current: StoreHarness): CaseSetup {
  const recorder = new Recorder();
  const coordinator = new IdempotencyCoordinator({ service: 'conformance', store: current.store, observer: recorder });
  return { store: current.store, coordinator, recorder, outage: current.outage };
}
