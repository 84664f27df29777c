import type { RunEnvironment } from './environment';
import type { ScenarioResult, VariantRun } from './scenario';
import type { PolicyRun } from './write-up';

/** A write-up policy as results.json keeps it: no raw events or ledger lines. */
export type PolicyRecord = Omit<PolicyRun, 'events' | 'ledger'> & { expectedCharges: number };

/** A failure scenario as results.json keeps it, with the run that produced it. */
export type FailureRecord = Omit<ScenarioResult, 'variants'> & {
  environment: RunEnvironment;
  durationMs: number;
  variants: Array<Omit<VariantRun, 'events' | 'ledger'>>;
};

/** results.json: every section with the run that wrote it; `environment` is the latest run's. */
export interface ResultsFile {
  environment: RunEnvironment;
  writeUp?: { environment: RunEnvironment; durationMs: number; policies: PolicyRecord[] };
  failures: FailureRecord[];
}

/** The parts of an earlier results.json this runner can keep; nothing when it is missing or of another shape. */
export function readResults(text: string | undefined): Pick<ResultsFile, 'writeUp' | 'failures'> {
  if (!text) return { failures: [] };
  try {
    const parsed = JSON.parse(text) as Partial<ResultsFile>;
    return { writeUp: parsed.writeUp, failures: Array.isArray(parsed.failures) ? parsed.failures.filter((f) => f.environment) : [] };
  } catch {
    return { failures: [] };
  }
}

/**
 * The earlier file with the sections of this run put in: a section this run
 * ran replaces the earlier one; every other section stays; failures keep
 * the runner's order.
 */
export function mergeResults(
  earlier: Pick<ResultsFile, 'writeUp' | 'failures'>,
  run: { environment: RunEnvironment; writeUp?: ResultsFile['writeUp']; failures: FailureRecord[] },
  order: readonly string[],
): ResultsFile {
  const failures = new Map(earlier.failures.map((f) => [f.id, f]));
  for (const failure of run.failures) failures.set(failure.id, failure);
  return {
    environment: run.environment,
    writeUp: run.writeUp ?? earlier.writeUp,
    failures: order.flatMap((id) => failures.get(id) ?? []),
  };
}

/** What results.json keeps of a write-up policy. */
export function policyRecord({ events: _events, ledger: _ledger, ...run }: PolicyRun, expectedCharges: number): PolicyRecord {
  return { ...run, expectedCharges };
}

/** What results.json keeps of a failure scenario. */
export function failureRecord(result: ScenarioResult, environment: RunEnvironment, durationMs: number): FailureRecord {
  return {
    ...result,
    environment,
    durationMs,
    variants: result.variants.map(({ events: _events, ledger: _ledger, ...variant }) => variant),
  };
}
