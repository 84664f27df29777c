import { eventually } from './testing/async';
import type { ClaimRequest, InspectableStore } from './store';

/** The heartbeat a silent holder claims with: it never renews, so the store finds it silent after two of these. */
const SILENT_HEARTBEAT_MS = 20;

/**
 * Claim a record as a holder that is gone: its claim names a heartbeat of
 * `heartbeatMs` ({@link SILENT_HEARTBEAT_MS} by default) and nothing ever renews it. Resolves with the
 * epoch once the store itself reports the holder silent (by its own clock,
 * so no sleep has to guess it), while the lease has long to run.
 */
export async function claimSilent(
  store: InspectableStore,
  request: Omit<ClaimRequest, 'heartbeatMs'>,
  heartbeatMs = SILENT_HEARTBEAT_MS,
): Promise<number> {
  const claim = await store.claim({ ...request, heartbeatMs });
  if (claim.status !== 'claimed') throw new Error(`expected a claim, got ${claim.status}`);
  await eventually(async () => {
    const record = await store.inspect(request.recordKey);
    return (record?.lastRenewalMsAgo ?? 0) > 2 * heartbeatMs;
  }, 'the holder to fall silent');
  return claim.epoch;
}
