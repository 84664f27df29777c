import { describeCompletionFailureCases } from './conformance/completion-failure.cases';
import { conformanceContext, type Harness } from './conformance/context';
import { describeFencingCases } from './conformance/fencing.cases';
import { describeLifecycleCases } from './conformance/lifecycle.cases';
import { describeOutageCases } from './conformance/outage.cases';
import { describeReleaseCases } from './conformance/release.cases';
import { describeResendCases } from './conformance/resend.cases';
import { describeSharingCases } from './conformance/sharing.cases';
import { describeWaitingCases } from './conformance/waiting.cases';

export type { HarnessRequest, StoreHarness } from './conformance/context';

export interface ConformanceOptions {
  /** The harness can provide `outage`; without it the outage cases are not defined. */
  outage?: boolean;
}

/**
 * The behaviour every `IdempotencyStore` must show together with the
 * coordinator: one execution per key, waiters answered by the winner,
 * release on failure, fencing, leases, retention, calls resent by their
 * owner, its lifecycle (connect,
 * ping) and outages. Run it once
 * per store; no mocks, real timers, short leases with wide margins, and
 * orderings read off recorded events rather than clocks.
 *
 * `harness` is called once per case, with `{ outage: true }` by the cases
 * that stop the store.
 *
 * @example
 * describeStoreConformance('MemoryStore', async () => {
 *   const store = new MemoryStore();
 *   return { store, teardown: () => store.close() };
 * });
 */
export function describeStoreConformance(name: string, harness: Harness, options: ConformanceOptions = {}): void {
  describe(`${name} (store conformance)`, () => {
    const context = conformanceContext(harness);
    describe('sharing one execution', () => describeSharingCases(context));
    describe('waiting on one key', () => describeWaitingCases(context));
    describe('releasing on failure', () => describeReleaseCases(context));
    describe('fencing, leases and retention', () => describeFencingCases(context));
    describe('the same call sent twice by its owner', () => describeResendCases(context));
    describe('a completion that fails once', () => describeCompletionFailureCases(context));
    describe('connecting and answering health checks', () => describeLifecycleCases(context));
    // A store that cannot be stopped (memory) has no outage cases at all, rather than skipped ones.
    if (options.outage) describe('store outage', () => describeOutageCases(context));
  });
}
