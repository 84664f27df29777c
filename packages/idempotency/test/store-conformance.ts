import { storeConformanceCases, type ConformanceOptions, type Harness } from '@idempotency-chain/idempotency/testing';

/**
 * The public conformance suite (`@idempotency-chain/idempotency/testing`)
 * registered with Vitest for one of this package's stores, as a user registers
 * it for theirs.
 */
export function describeStoreConformance(name: string, harness: Harness, options: ConformanceOptions = {}): void {
  describe(`${name} (store conformance)`, () => {
    for (const c of storeConformanceCases(harness, options)) it(c.name, c.run, c.timeoutMs);
  });
}
