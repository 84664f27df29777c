import { caseSetup, type AddCase, type Setup } from './case-context';
import { completionFailureCases } from './cases/completion-failure.cases';
import { fencingCases } from './cases/fencing.cases';
import { lifecycleCases } from './cases/lifecycle.cases';
import { outageCases } from './cases/outage.cases';
import { releaseCases } from './cases/release.cases';
import { resendCases } from './cases/resend.cases';
import { sharingCases } from './cases/sharing.cases';
import { waitingCases } from './cases/waiting.cases';
import type { Harness, StoreHarness } from './harness';

/**
 * One case of the suite, for the test runner to register under its name.
 *
 * @public
 */
export interface ConformanceCase {
  /** The case's group and what it checks, e.g. `fencing, leases and retention › frees a crashed holder’s key…`. */
  readonly name: string;
  /** How long a working store may take, with a wide margin: pass it as the runner's timeout for the case. */
  readonly timeoutMs: number;
  /** Builds the case's store from the harness, runs the case and tears the store down; rejects when the store fails it. */
  readonly run: () => Promise<void>;
}

/**
 * Options of {@link storeConformanceCases}.
 *
 * @public
 */
export interface ConformanceOptions {
  /** The harness provides `outage` when asked for it; without it the outage cases are left out. */
  outage?: boolean;
}

/** The bound of every case: its longest wait (100 claims answered, then 20 s for their answers) with room to spare. */
const CASE_TIMEOUT_MS = 30_000;

const GROUPS: ReadonlyArray<readonly [string, (it: AddCase) => void]> = [
  ['sharing one execution', sharingCases],
  ['waiting on one key', waitingCases],
  ['releasing on failure', releaseCases],
  ['fencing, leases and retention', fencingCases],
  ['the same call sent twice by its owner', resendCases],
  ['a completion that fails once', completionFailureCases],
  ['connecting and answering health checks', lifecycleCases],
];
const OUTAGE_GROUP = ['store outage', outageCases] as const;

/**
 * The behaviour every `IdempotencyStore` must show together with the
 * coordinator, as a list of named async cases: one execution per key,
 * waiters answered by the winner, release on failure, fencing, leases,
 * retention, calls resent by their owner, its lifecycle (connect, ping) and
 * outages. Register each case with your test runner; a case rejects (with a
 * `node:assert` error) when the store breaks the rule.
 *
 * The cases use real timers, leases of a few hundred milliseconds and wide
 * margins, and read orderings off recorded events rather than clocks. A
 * waiter must be woken by the store's completion signal within 5 s: a store
 * that also polls must poll less often than that, or a missing signal goes
 * unnoticed.
 *
 * @param harness - called once per case (with `{ outage: true }` by the
 * cases that stop the store); the case tears its store down when it ends.
 * @example Jest or Vitest
 * ```ts
 * for (const c of storeConformanceCases(async () => {
 *   const store = new MyStore();
 *   return { store, teardown: () => store.close() };
 * })) it(c.name, c.run, c.timeoutMs);
 * ```
 *
 * @example node:test
 * ```ts
 * import { test } from 'node:test';
 *
 * for (const c of storeConformanceCases(harness)) void test(c.name, { timeout: c.timeoutMs }, c.run);
 * ```
 *
 * @public
 */
export function storeConformanceCases(harness: Harness, options: ConformanceOptions = {}): ConformanceCase[] {
  const cases: ConformanceCase[] = [];
  // A store that cannot be stopped (memory) has no outage cases at all, rather than skipped ones.
  for (const [group, define] of options.outage ? [...GROUPS, OUTAGE_GROUP] : GROUPS) {
    define((name, body) => cases.push({ name: `${group} › ${name}`, timeoutMs: CASE_TIMEOUT_MS, run: () => runCase(harness, body) }));
  }
  return cases;
}

/** Run one case on stores of its own, and tear down every one it set up, whatever the outcome. */
async function runCase(harness: Harness, body: (setup: Setup) => Promise<void>): Promise<void> {
  const opened: StoreHarness[] = [];
  const setup: Setup = async (request = {}) => {
    const current = await harness(request);
    opened.push(current);
    if (request.outage && !current.outage) throw new Error('the harness was asked for an outage and gave no `outage.stop()`');
    return caseSetup(current);
  };
  try {
    await body(setup);
  } finally {
    for (const current of opened) await current.teardown();
  }
}
