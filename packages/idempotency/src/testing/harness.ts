import type { IdempotencyStore } from '../store';

/**
 * A store under test, built fresh for every case.
 *
 * @public
 */
export interface StoreHarness {
  /** The store the case runs against. */
  store: IdempotencyStore;
  /** Close the store and remove what the case left behind. */
  teardown(): Promise<void>;
  /** Make the store unreachable (only when the harness was asked for an outage). */
  outage?: {
    /** Stops the store's server (or cuts the connection to it); resolves once a call would fail. */
    stop(): Promise<void>;
  };
}

/**
 * What a case asks of its harness.
 *
 * @public
 */
export interface HarnessRequest {
  /** The case stops the store: give it a store of its own, with `outage`. */
  outage?: boolean;
}

/**
 * Builds the store for one case; called once per case, so every case starts
 * from a store of its own (or a fresh key prefix on a shared server).
 *
 * @public
 */
export type Harness = (request: HarnessRequest) => Promise<StoreHarness>;
