import type { Harness } from '@idempotency-chain/idempotency/testing';
import { EveryClaimWins } from './broken-store.js';
import { MapStore } from './map-store.js';

/** A fresh store per case: `MapStore`, or the broken one when `OWN_STORE=broken`. */
export const harness: Harness = async () => {
  const store = process.env.OWN_STORE === 'broken' ? new EveryClaimWins() : new MapStore();
  return { store, teardown: () => store.close() };
};
