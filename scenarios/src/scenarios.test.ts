import { readFileSync } from 'node:fs';
import { FAILURE_SCENARIOS } from './failures';
import { OUTPUT, runAll } from './run-all';

// Runs the real services as separate processes; needs the apps built (turbo's ^build) and Redis.
jest.setTimeout(600_000);

describe('the write-up, reproduced', () => {
  let outcome: Awaited<ReturnType<typeof runAll>>;

  beforeAll(async () => {
    if (!process.env.REDIS_URL) throw new Error('set REDIS_URL: the scenarios are asserted against a real Redis');
    outcome = await runAll(() => undefined);
  });

  const run = (policy: string) => {
    const found = outcome.results.scenarios.find((s) => s.policy === policy);
    if (!found) throw new Error(`no result for ${policy}`);
    return found;
  };

  it('ran on Redis', () => {
    expect(outcome.results.environment.store).toBe('redis');
  });

  it('charges 4, 2, 1, 1 under none, per-attempt, propagated, fingerprint', () => {
    expect(['none', 'per-attempt', 'propagated', 'fingerprint'].map((p) => run(p).charges)).toEqual([4, 2, 1, 1]);
  });

  it('charges again on the later press without protection', () => {
    expect(run('none').laterPress.chargedAgain).toBe(true);
  });

  it.each(['propagated', 'fingerprint'])('answers the later press from the store under %s, without a charge', (policy) => {
    const later = run(policy).laterPress;
    expect(later).toMatchObject({ status: 201, replayed: true, chargedAgain: false, chargesAfter: 1 });
  });

  it('ran every failure scenario, none skipped', () => {
    expect(outcome.failures.filter((f) => f.skipped).map((f) => `${f.id}: ${f.skipped}`)).toEqual([]);
    expect(outcome.failures.map((f) => f.id)).toEqual(FAILURE_SCENARIOS.map((s) => s.id));
  });

  it('gets the expected charge count in every variant of every failure scenario, naive and ours', () => {
    const counts = outcome.failures.flatMap((f) => f.variants.map((v) => `${f.id} | ${v.variant} | ${v.charges}`));
    const expected = outcome.failures.flatMap((f) => f.variants.map((v) => `${f.id} | ${v.variant} | ${v.expectedCharges}`));
    expect(counts).toEqual(expected);
  });

  it('runs every failure scenario as a naive variant and ours, side by side', () => {
    for (const failure of outcome.failures) {
      const naive = failure.variants.filter((v) => v.variant.startsWith('naive'));
      const ours = failure.variants.filter((v) => v.variant.startsWith('ours'));
      expect({ id: failure.id, naive: naive.length > 0, ours: ours.length > 0 }).toEqual({ id: failure.id, naive: true, ours: true });
    }
  });

  it('answers concurrent duplicates identically, and refuses a reused key at the gateway', () => {
    const wait = outcome.failures.find((f) => f.id === 'double-click')!.variants.find((v) => v.variant.includes('wait'))!;
    expect(wait.details).toMatchObject({ statuses: { '201': 50 }, distinctBodies: 1 });
    const reuse = outcome.failures.find((f) => f.id === 'key-reuse')!.variants.find((v) => v.variant.startsWith('ours'))!;
    expect(reuse.details).toMatchObject({ first: 201, changed: 422, again: 422, refusedBy: ['gateway'] });
  });

  it('wrote results.json and RESULTS.md in this run', () => {
    const results = JSON.parse(readFileSync(OUTPUT.results, 'utf8')) as typeof outcome.results;
    expect(results.environment.date).toBe(outcome.results.environment.date);
    const markdown = readFileSync(OUTPUT.markdown, 'utf8');
    expect(markdown).toContain(outcome.results.environment.date);
    const variants = outcome.failures.reduce((n, f) => n + f.variants.length, 0);
    expect(markdown.match(/```mermaid/g)).toHaveLength(4 + variants);
    expect(markdown).toContain('| `none` | **4** |');
  });
});
