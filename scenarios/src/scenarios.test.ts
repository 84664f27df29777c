import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gitStatus, resultsUnder, runCommand, tempRoot, type CommandResult } from './cli.test-support';
import { checkMarkdownFile, type DiagramReport } from '@idempotency-chain/diagram-check';
import { FAILURE_SCENARIOS } from './failures';
import { chartLink } from './output-paths';
import type { ResultsFile } from './results-file';
import { SCENARIO_IDS } from './selection';

// The real services as separate processes, every scenario: minutes on a loaded machine.
vi.setConfig({ testTimeout: 900_000, hookTimeout: 900_000 });

/** An arrow's text names its attempt and its key; a note does not (a charge, or the steps left out). */
const ATTEMPT_AND_KEY = /attempt \d+, (key [0-9a-f]{6}|no key)/;
const NOTE = /^\+\d+ ms charge \d+|more steps$/;

describe('npm run scenarios on Redis, written to a temporary folder', () => {
  let root: string;
  let run: CommandResult;
  let results: ResultsFile;
  let markdown: string;
  let diagrams: DiagramReport;
  let statusBefore: string;

  beforeAll(async () => {
    if (!process.env.REDIS_URL) throw new Error('set REDIS_URL: the scenarios are asserted against a real Redis');
    statusBefore = gitStatus();
    root = tempRoot('full');
    run = await runCommand('main.js', ['--out', root], { SCENARIOS: undefined });
    results = resultsUnder(root);
    markdown = readFileSync(join(root, 'RESULTS.md'), 'utf8');
    diagrams = await checkMarkdownFile(join(root, 'RESULTS.md'));
  });

  const policy = (name: string) => {
    const found = results.writeUp?.policies.find((p) => p.policy === name);
    if (!found) throw new Error(`no result for ${name}`);
    return found;
  };

  it('ran on the Redis at REDIS_URL and ended well', () => {
    expect({ code: run.code, stderr: run.code === 0 ? '' : run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(results.environment).toMatchObject({ store: 'redis', storeNote: 'REDIS_URL' });
  });

  it('charges 4, 2, 1, 1 under none, per-attempt, propagated, fingerprint', () => {
    expect(['none', 'per-attempt', 'propagated', 'fingerprint'].map((p) => policy(p).charges)).toEqual([4, 2, 1, 1]);
  });

  it('charges again on the later press without protection, and replays it under propagated and fingerprint', () => {
    expect(policy('none').laterPress.chargedAgain).toBe(true);
    for (const name of ['propagated', 'fingerprint']) {
      expect(policy(name).laterPress).toMatchObject({ status: 201, replayed: true, chargedAgain: false, chargesAfter: 1 });
    }
  });

  it('ran every failure scenario, none skipped, with the expected charges in every variant, naive and ours', () => {
    expect(results.failures.filter((f) => f.skipped).map((f) => `${f.id}: ${f.skipped}`)).toEqual([]);
    expect(results.failures.map((f) => f.id)).toEqual(FAILURE_SCENARIOS.map((s) => s.id));
    const counts = results.failures.flatMap((f) => f.variants.map((v) => `${f.id} | ${v.variant} | ${v.charges}`));
    expect(counts).toEqual(results.failures.flatMap((f) => f.variants.map((v) => `${f.id} | ${v.variant} | ${v.expectedCharges}`)));
    for (const f of results.failures) {
      expect({
        id: f.id,
        naive: f.variants.some((v) => v.variant.startsWith('naive')),
        ours: f.variants.some((v) => v.variant.startsWith('ours')),
      }).toEqual({
        id: f.id,
        naive: true,
        ours: true,
      });
    }
  });

  it('answers concurrent duplicates identically, and refuses a reused key at the gateway', () => {
    const wait = results.failures.find((f) => f.id === 'double-click')!.variants.find((v) => v.variant.includes('wait'))!;
    expect(wait.details).toMatchObject({ statuses: { '201': 50 }, distinctBodies: 1 });
    const reuse = results.failures.find((f) => f.id === 'key-reuse')!.variants.find((v) => v.variant.startsWith('ours'))!;
    expect(reuse.details).toMatchObject({ first: 201, changed: 422, again: 422, refusedBy: ['gateway'] });
  });

  it('wrote RESULTS.md with one diagram per policy and per variant, every message whole for Mermaid', () => {
    const variants = results.failures.reduce((n, f) => n + f.variants.length, 0);
    expect(diagrams.diagrams).toBe(4 + variants);
    expect(diagrams.errors).toEqual([]);
    expect(diagrams.messages.filter((m) => !m.whole)).toEqual([]);
    const arrows = diagrams.messages.filter((m) => !NOTE.test(m.source));
    expect(arrows.length).toBeGreaterThan(100);
    expect(arrows.filter((m) => !ATTEMPT_AND_KEY.test(m.parsed ?? ''))).toEqual([]);
    expect(markdown).not.toMatch(/epoch \d{13}/);
  });

  it('says in the propagated section why the caller saw 502 although it was charged once', () => {
    // Every hop gives up before payments answers the slow first attempt (1.5 s): the gateway answers 502.
    expect(policy('propagated').caller.status).toBe(502);
    const section = markdown.slice(markdown.indexOf('### `propagated`'), markdown.indexOf('### `fingerprint`'));
    expect(section).toContain('**Why the caller saw 502 although it was charged exactly once.**');
    expect(section).toContain('"outcome unknown", not "not charged"');
  });

  it('drew a chart per section from the measured counts, linked from RESULTS.md', () => {
    for (const id of SCENARIO_IDS) {
      const link = chartLink(id);
      expect(markdown).toContain(`](${link})`);
      const svg = readFileSync(join(root, link), 'utf8');
      const counts =
        id === 'write-up'
          ? results.writeUp!.policies.map((p) => p.charges)
          : results.failures.find((f) => f.id === id)!.variants.map((v) => v.charges);
      const texts = [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
      for (const count of counts) expect(texts).toContain(String(count));
    }
  });

  it('left the repository as it found it: nothing tracked or new was written there', () => {
    expect(gitStatus()).toBe(statusBefore);
    expect(existsSync(join(root, 'RESULTS.md'))).toBe(true);
  });
});
