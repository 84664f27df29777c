import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkMarkdownFile, type DiagramReport } from '@idempotency-chain/diagram-check';
import { main } from '../src/cli';
import type { RunReport } from '../src/run/report';
import { portTaken } from './support/free-port';
import { pythonImports } from './support/python-imports';
import { captureOutput } from './support/output';
import { PYTHON_CHAIN, startPythonChain, type PaymentsOptions } from './support/python-chain';

/**
 * The proof from outside: a chain in another language, started as real processes and
 * verified by the CLI exactly as a team's CI would run it. Only the verifier's JSON
 * report is read back.
 */
// Concurrent, two at a time (maxConcurrency in vitest.config.mts): each chain spends most of its
// run waiting out its own timeouts and quiet periods, on ports and in a directory of its own.
describe.concurrent('a Python chain verified from outside', () => {
  async function verifyOnce(dir: string, variant: 'naive' | 'keyed', payments: PaymentsOptions, args: string[]) {
    const chain = await startPythonChain(variant, dir, payments);
    try {
      const config = join(dir, `${variant}.yaml`);
      writeFileSync(config, chain.configYaml);
      const out = captureOutput();
      const reportDir = join(dir, `${variant}-report`);
      const code = await main(['run', config, '--report-dir', reportDir, ...args], out, out);
      // Exit 2 writes no report: what the verifier said is the failure to show.
      if (code === 2) throw new Error(`the verifier could not run the chain: ${out.text()}`);
      const report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as RunReport;
      const markdown = join(reportDir, 'report.md');
      return { code, report, out: out.text(), markdown: readFileSync(markdown, 'utf8'), diagrams: await checkMarkdownFile(markdown) };
    } finally {
      await chain.stop();
    }
  }

  /** Runs the chain under the verifier; again, on new ports, if another process took one between the pick and the bind. */
  async function verify(variant: 'naive' | 'keyed', payments: PaymentsOptions = {}, ...args: string[]) {
    const dir = mkdtempSync(join(tmpdir(), 'verify-python-'));
    try {
      for (let tries = 1; ; tries += 1) {
        try {
          return await verifyOnce(dir, variant, payments, args);
        } catch (error) {
          if (tries === 3 || !portTaken(String(error))) throw error;
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /** What the proxies saw, drawn as Mermaid and read back by Mermaid itself: every arrow and note whole. */
  const expectWhole = (diagrams: DiagramReport, report: RunReport) => {
    expect(diagrams.errors).toEqual([]);
    expect(diagrams.diagrams).toBe(report.scenarios.length);
    expect(diagrams.messages.length).toBeGreaterThanOrEqual(report.scenarios.reduce((n, s) => n + s.attempts.length, 0));
    expect(diagrams.messages.filter((m) => !m.whole)).toEqual([]);
  };

  it("is written with Python's standard library only", () => {
    const found = pythonImports(PYTHON_CHAIN);
    expect(found.imported).toEqual(expect.arrayContaining(['http.server', 'sqlite3', 'urllib.request']));
    expect(found.foreign).toEqual([]);
  });

  const effects = (report: RunReport, scenario: string) => report.scenarios.find((s) => s.name === scenario)?.intents.map((i) => i.effects);

  it('reports the naive variant charging twice and exits 1', async () => {
    const { code, report, out, markdown, diagrams } = await verify('naive');
    expect(code).toBe(1);
    expect(report.passed).toBe(false);
    expect(effects(report, 'write-up')?.[0]).toBeGreaterThan(1);
    expect(effects(report, 'lost-reply@payments')?.[0]).toBeGreaterThan(1);
    const writeUp = report.scenarios.find((s) => s.name === 'write-up');
    expect(writeUp?.violations).toContainEqual(expect.objectContaining({ invariant: 'effects' }));
    const first = (hop: string) => writeUp?.attempts.find((a) => a.hop === hop && a.attempt === 1);
    expect(first('payments')).toMatchObject({ faults: ['latency 1500ms'], status: 201 });
    expect(first('orders')).toMatchObject({ faults: ['lose-reply'], outcome: 'reply-lost' });
    // The changed amount charged the first order again; the other order's id charged that order.
    expect(effects(report, 'key-reuse')).toEqual([2, 1]);
    expect(out).toMatch(/write-up\s+FAIL/);
    expect(markdown).toContain('reply lost');
    expectWhole(diagrams, report);
  }, 240_000);

  it('passes the keyed variant with one charge per intent and exits 0', async () => {
    const { code, report, out, diagrams } = await verify('keyed');
    expect(report.scenarios.filter((s) => !s.passed).map((s) => s.name)).toEqual([]);
    expect(code).toBe(0);
    for (const scenario of report.scenarios) {
      for (const intent of scenario.intents) expect(intent.effects).toBe(intent.expected === 'none' ? 0 : 1);
    }
    // Every scenario, with the per-hop ones once per hop (the list itself is pinned in cli.test.ts).
    expect(report.scenarios).toHaveLength(21);
    expect(out).toContain('21/21 scenarios passed');
    expectWhole(diagrams, report);
  }, 240_000);

  it('fails a payments that asks "done?" without claiming the key first, at the hop, not at the entry', async () => {
    const scenarios = ['double-click', 'duplicate@payments', 'retry-while-running@payments'];
    const { code, report } = await verify('keyed', { flaw: 'done-check' }, ...scenarios.flatMap((s) => ['--scenario', s]));
    expect(report.scenarios.map((s) => [s.name, s.passed, s.notExercised])).toEqual([
      // The gateway claims each key: a double-click at the entry finds nothing.
      ['double-click', true, undefined],
      ['duplicate@payments', false, undefined],
      ['retry-while-running@payments', false, undefined],
    ]);
    expect(effects(report, 'duplicate@payments')).toEqual([2]);
    expect(effects(report, 'retry-while-running@payments')).toEqual([2]);
    expect(code).toBe(1);
  }, 240_000);

  it('fails a payments whose fingerprint leaves out the amount: the same key with another amount is replayed', async () => {
    const { code, report } = await verify('keyed', { flaw: 'fingerprint-without-amount' }, '--scenario', 'key-reuse');
    const [scenario] = report.scenarios;
    expect(scenario?.violations.map((v) => [v.invariant, v.message])).toEqual([
      ['refused', 'the press "same key, amount changed" got 201, expected a refusal (422)'],
    ]);
    // The other order's id is refused: only the amount slips through, and it charged nothing new.
    expect(scenario?.intents.map((i) => i.effects)).toEqual([1, 0]);
    expect(code).toBe(1);
  }, 240_000);

  it('fails an orders that stores its own 502 when payments was briefly unavailable, and replays it', async () => {
    const { code, report } = await verify('keyed', { flaw: 'stores-failure' }, '--scenario', 'unavailable', '--scenario', 'reset@payments');
    expect(report.scenarios.map((s) => [s.name, s.passed, s.intents[0]?.effects])).toEqual([
      ['reset@payments', false, 0],
      ['unavailable@gateway', true, 1],
      ['unavailable@orders', true, 1],
      ['unavailable@payments', false, 0],
    ]);
    const broken = report.scenarios.find((s) => s.name === 'unavailable@payments')?.violations.map((v) => v.invariant);
    expect(broken).toEqual(['effects', 'final-answer', 'settled-final']);
    expect(code).toBe(1);
  }, 240_000);

  it('fails a payments that forgets keys sooner than the retry window the chain promises', async () => {
    const { code, report } = await verify('keyed', { flaw: 'short-retention' }, '--scenario', 'later-press', '--scenario', 'late-press');
    expect(report.scenarios.map((s) => [s.name, s.passed, s.intents[0]?.effects])).toEqual([
      ['later-press', true, 1],
      // retention.minimumMs is 5 s in the chain's config: the key was forgotten after 3 s.
      ['late-press', false, 2],
    ]);
    expect(code).toBe(1);
  }, 240_000);

  it('passes two callers told apart by a body field, and names the second refused when the key is not scoped by it', async () => {
    const scoped = await verify('keyed', { merchants: true }, '--scenario', 'two-callers');
    expect(scoped.report.scenarios.map((s) => [s.name, s.passed, s.intents.map((i) => i.effects)])).toEqual([
      ['two-callers', true, [1, 1]],
    ]);
    expect(scoped.code).toBe(0);

    const unscoped = await verify('keyed', { merchants: true, flaw: 'unscoped-key' }, '--scenario', 'two-callers');
    const [scenario] = unscoped.report.scenarios;
    expect(scenario?.intents.map((i) => i.effects)).toEqual([1, 0]);
    expect(scenario?.violations.find((v) => v.invariant === 'own-answer')?.message).toMatch(
      /^"caller 2 press" was refused 422 .* under the key "caller 1 press" had used: the chain does not tell the two callers apart$/,
    );
    expect(unscoped.code).toBe(1);
  }, 240_000);

  it('kills payments after its charge: keys kept with the charges survive the restart', async () => {
    const { code, report } = await verify('keyed', { startedByVerifier: true }, '--scenario', 'kill');
    expect(report.scenarios.map((s) => [s.name, s.passed, s.intents[0]?.effects])).toEqual([['kill', true, 1]]);
    const atPayments = report.scenarios[0]?.attempts.filter((a) => a.hop === 'payments');
    expect(atPayments?.[0]).toMatchObject({ attempt: 1, faults: ['kill'], status: 201, outcome: 'reply-lost' });
    expect(code).toBe(0);
  }, 240_000);

  it('kills payments after its charge: a ledger kept in memory loses the charge, though the retry makes it one again', async () => {
    const { code, report } = await verify('keyed', { startedByVerifier: true, flaw: 'memory-ledger' }, '--scenario', 'kill');
    const [scenario] = report.scenarios;
    // Counted at the end, the retry's charge looks like the one charge it should be.
    expect(scenario?.intents[0]?.effects).toBe(1);
    expect(scenario?.violations.map((v) => [v.invariant, v.message])).toEqual([
      ['durable', 'the effect store lost an effect in the crash: counted 1 just before the kill, 0 just after the restart'],
    ]);
    expect(code).toBe(1);
  }, 240_000);

  it('kills payments after its charge: keys kept in memory are lost and the retry charges again', async () => {
    const { code, report } = await verify('keyed', { startedByVerifier: true, keys: 'memory' }, '--scenario', 'kill');
    expect(report.scenarios[0]?.intents[0]?.effects).toBeGreaterThan(1);
    expect(report.scenarios[0]?.violations).toContainEqual(expect.objectContaining({ invariant: 'effects' }));
    expect(code).toBe(1);
  }, 240_000);
});
