/**
 * The store conformance suite: the cases every `IdempotencyStore` passes,
 * run here against memory, Redis, Redis Cluster and PostgreSQL, and by you
 * against your own store, in any test runner. Assertions use
 * `node:assert/strict`; nothing here imports a test runner.
 */
export { storeConformanceCases } from './store-conformance';
export type { ConformanceCase, ConformanceOptions } from './store-conformance';
export type { Harness, HarnessRequest, StoreHarness } from './harness';
