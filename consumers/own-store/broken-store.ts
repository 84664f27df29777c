import { MapStore } from './map-store.js';

/** `MapStore` with one bug: a lease never keeps another owner out, so two claims of one key both win. */
export class EveryClaimWins extends MapStore {
  protected override leaseHeld(): boolean {
    return false;
  }
}
