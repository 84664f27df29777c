import { readFileSync } from 'node:fs';
import { OUTPUT, runAll } from './run-all';

// Runs the real services as separate processes; needs the apps built (turbo's ^build) and Redis.
jest.setTimeout(180_000);

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

  it('wrote results.json and RESULTS.md in this run', () => {
    const results = JSON.parse(readFileSync(OUTPUT.results, 'utf8')) as typeof outcome.results;
    expect(results.environment.date).toBe(outcome.results.environment.date);
    const markdown = readFileSync(OUTPUT.markdown, 'utf8');
    expect(markdown).toContain(outcome.results.environment.date);
    expect(markdown.match(/```mermaid/g)).toHaveLength(4);
    expect(markdown).toContain('| `none` | **4** |');
  });
});
