import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gitStatus, runCommand, tempRoot, type CommandResult } from '../cli.test-support';
import { parseSections } from '../results-document';
import type { ChaosFile } from './chaos-record';
import { FAULT_KINDS } from './fault-schedule';

// Three soaks of 30 s per store: about four minutes in all on a loaded 2-core machine.
vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

const SECONDS = '30';
/** The seed every CI run replays, beside a fresh one per run. */
const FIXED_SEED = '20261130';

/** `npm run chaos` as a user runs it, writing under a temporary root. */
async function chaos(env: Record<string, string | undefined>): Promise<{ run: CommandResult; file: ChaosFile; markdown: string }> {
  const root = tempRoot('chaos');
  const run = await runCommand('chaos/main.js', ['--out', root], {
    CHAOS_SECONDS: SECONDS,
    LAB_NAIVE: undefined,
    KEY_POLICY: undefined,
    ...env,
  });
  const file = JSON.parse(readFileSync(join(root, 'scenarios', 'chaos.json'), 'utf8')) as ChaosFile;
  return { run, file, markdown: readFileSync(join(root, 'RESULTS.md'), 'utf8') };
}

/** The seed the command says it ran with. */
const seedOf = (run: CommandResult) => Number(/chaos: seed (\d+)/.exec(run.stderr)?.[1]);

describe('npm run chaos', () => {
  const before = gitStatus();
  afterAll(() => expect(gitStatus()).toBe(before));

  it.each([
    ['a fixed seed', FIXED_SEED],
    ['a fresh random seed', undefined],
  ])('with %s: hundreds of checkouts per store under every kind of fault, and every invariant holds', async (_name, seed) => {
    const { run, file, markdown } = await chaos({ CHAOS_SEED: seed });
    console.log(
      `chaos seed ${seedOf(run)} (${seed ? 'fixed' : 'random'}): replay with CHAOS_SEED=${seedOf(run)} CHAOS_SECONDS=${SECONDS} npm run chaos`,
    );
    if (seed) expect(seedOf(run)).toBe(Number(seed));
    expect({ code: run.code, stderr: run.code === 0 ? '' : run.stderr.slice(-4000) }).toEqual({ code: 0, stderr: '' });
    expect(file.runs.map((r) => r.store)).toEqual(['redis', 'postgres']);
    for (const r of file.runs) {
      expect(r.seed).toBe(seedOf(run));
      expect(r.checkouts).toBeGreaterThanOrEqual(300);
      for (const kind of FAULT_KINDS)
        expect({ store: r.store, kind, injected: r.faults[kind] > 0 }).toEqual({ store: r.store, kind, injected: true });
      expect({
        store: r.store,
        double: r.doubleCharges,
        lost: r.lostCharges,
        unsettled: r.unsettled,
        mismatched: r.mismatchedReplays,
      }).toEqual({
        store: r.store,
        double: 0,
        lost: 0,
        unsettled: 0,
        mismatched: 0,
      });
    }
    expect(parseSections(markdown).get('chaos')).toContain(`CHAOS_SEED=${seedOf(run)}`);
  });

  it.each([
    ['CHAOS_SEED', { CHAOS_SEED: '1.5' }],
    ['CHAOS_SECONDS', { CHAOS_SECONDS: 'ten' }],
    ['CHAOS_STORES', { CHAOS_STORES: 'redis,mongo' }],
  ])('refuses a %s it cannot run with: exit 2, says why, writes nothing', async (name, env) => {
    const root = tempRoot('chaos-refused');
    const run = await runCommand('chaos/main.js', ['--out', root], { LAB_NAIVE: undefined, KEY_POLICY: undefined, ...env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${name}=`);
    expect(run.stderr).toContain('nothing run, nothing written');
    expect(existsSync(join(root, 'scenarios', 'chaos.json'))).toBe(false);
  });

  it('finds the double charges of the naive variants (no heartbeat, a plain ledger): fails, and prints the seed and the histories', async () => {
    const { run, file } = await chaos({ CHAOS_SEED: FIXED_SEED, CHAOS_STORES: 'redis', LAB_NAIVE: 'plain-ledger,no-heartbeat' });
    const [redis] = file.runs;
    expect(redis?.naive).toBe('plain-ledger,no-heartbeat');
    expect(redis?.doubleCharges).toBeGreaterThan(0);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`INVARIANT BROKEN on redis, seed ${FIXED_SEED}`);
    expect(run.stderr).toMatch(/ledger:\n {4}ch_\S+ .*\n {4}ch_/);
  });
});
