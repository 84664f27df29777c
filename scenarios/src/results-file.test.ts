import type { RunEnvironment } from './environment';
import { mergeResults, readResults, type FailureRecord } from './results-file';

const env = (date: string): RunEnvironment => ({
  node: 'v20',
  platform: 'linux x64',
  store: 'redis',
  storeNote: 'REDIS_URL',
  commit: 'abc',
  date,
});

function failure(id: string, date: string, charges: number): FailureRecord {
  return {
    id,
    title: id,
    broke: '',
    fix: '',
    code: '',
    store: 'redis',
    environment: env(date),
    durationMs: 1,
    variants: [{ variant: 'ours', charges, expectedCharges: charges, outcome: '', details: {}, durationMs: 1 }],
  };
}

describe('results.json across runs', () => {
  const order = ['write-up', 'double-click', 'retention', 'key-reuse'];
  const first = mergeResults(
    { failures: [] },
    {
      environment: env('first'),
      writeUp: { environment: env('first'), durationMs: 1, policies: [] },
      failures: [failure('double-click', 'first', 1), failure('retention', 'first', 1)],
    },
    order,
  );

  it('keeps every section a partial run did not run, and replaces the ones it ran', () => {
    const second = mergeResults(
      readResults(JSON.stringify(first)),
      { environment: env('second'), failures: [failure('retention', 'second', 2)] },
      order,
    );
    expect(second.environment.date).toBe('second');
    expect(second.writeUp).toEqual(first.writeUp);
    expect(second.failures.map((f) => [f.id, f.environment.date])).toEqual([
      ['double-click', 'first'],
      ['retention', 'second'],
    ]);
  });

  it('orders failures as the runner does, whatever order they were run or kept in', () => {
    const merged = mergeResults(
      readResults(JSON.stringify(first)),
      { environment: env('third'), failures: [failure('key-reuse', 'third', 1)] },
      order,
    );
    expect(merged.failures.map((f) => f.id)).toEqual(['double-click', 'retention', 'key-reuse']);
  });

  it('starts afresh from a missing, broken or older file', () => {
    expect(readResults(undefined)).toEqual({ failures: [] });
    expect(readResults('{ not json')).toEqual({ failures: [] });
    expect(readResults(JSON.stringify({ scenarios: [], failures: [{ id: 'x' }] }))).toEqual({ writeUp: undefined, failures: [] });
  });
});
