import type { Attempt } from '../src/proxy/attempt';
import { failureText } from '../src/reports/failure';
import { junitReport } from '../src/reports/junit';
import { markdownReport } from '../src/reports/markdown';
import { sequenceDiagram } from '../src/reports/mermaid';
import { terminalProgress, terminalSummary } from '../src/reports/terminal';
import type { RunReport, ScenarioReport } from '../src/run/report';
import type { Scenario } from '../src/scenarios/scenario';
import { captureOutput } from './support/output';

const attempt = (fields: Partial<Attempt>): Attempt => ({
  seq: 1,
  scenario: 'write-up',
  intent: 'vfy-1',
  hop: 'payments',
  attempt: 1,
  method: 'POST',
  path: '/charges',
  keyHash: '1a2b3c4d',
  faults: [],
  status: 201,
  outcome: 'answered',
  startedMs: 0,
  endedMs: 10,
  ...fields,
});

const failed: ScenarioReport = {
  name: 'write-up',
  description: 'Held & lost <at> payments.',
  passed: false,
  durationMs: 2300,
  intents: [
    {
      intentId: 'vfy-1',
      keyHash: '1a2b3c4d',
      expected: 'once',
      effects: 2,
      presses: [{ label: 'press', answers: [{ attempt: 1, status: 201 }] }],
    },
  ],
  violations: [{ invariant: 'effects', intentId: 'vfy-1', message: 'expected exactly 1 effect(s), counted 2' }],
  attempts: [
    attempt({ seq: 1, hop: 'orders-v2', path: '/orders', startedMs: 0, endedMs: 1500 }),
    attempt({ seq: 2, faults: ['hold 1500ms', 'lose-reply'], startedMs: 5, endedMs: 1600, outcome: 'reply-lost' }),
    attempt({ seq: 3, attempt: 2, startedMs: 1005, endedMs: 1010 }),
  ],
};
/** A scenario as the runner announces it: only its name is shown. */
const scenarioNamed = (name: string): Scenario => ({ name, family: 'write-up', description: '', run: () => Promise.resolve([]) });
const passed: ScenarioReport = { ...failed, name: 'later-press', passed: true, violations: [], attempts: [] };
const run: RunReport = {
  config: 'chain.yaml',
  startedAt: '2026-01-01T00:00:00.000Z',
  durationMs: 4000,
  passed: false,
  hops: ['orders-v2', 'payments'],
  scenarios: [failed, passed],
  skipped: [],
};

describe('reports', () => {
  it('draws a sequence diagram in the order the proxies saw things, hop names as aliases', () => {
    expect(sequenceDiagram(run.hops, failed.attempts).split('\n')).toEqual([
      'sequenceDiagram',
      '  participant caller',
      '  participant h0 as orders-v2',
      '  participant h1 as payments',
      '  caller->>h0: orders-v2 a1 k=1a2b3c4d',
      '  h0->>h1: payments a1 k=1a2b3c4d',
      '  Note over h1: a1 hold 1500ms, lose-reply',
      '  h0->>h1: payments a2 k=1a2b3c4d',
      '  h1-->>h0: a2 201',
      '  h0-->>caller: a1 201',
      '  h1--xh0: a1 201 reply lost',
    ]);
  });

  it('writes JUnit XML with one case per scenario and the failure in full, escaped', () => {
    const xml = junitReport(run);
    expect(xml).toContain('<testsuites name="idempotency-verify" tests="2" failures="1" skipped="0" time="4.000">');
    expect(xml).toContain('<testcase classname="idempotency-verify" name="later-press" time="2.300"/>');
    expect(xml).toContain('<failure message="expected exactly 1 effect(s), counted 2">');
    expect(xml).toContain('Held &#38; lost &#60;at&#62; payments.');
    expect(xml).toContain('payments a1 POST /charges k=1a2b3c4d [hold 1500ms, lose-reply] -&#62; 201 reply-lost');
  });

  it('writes Markdown with a summary, the broken invariants and a Mermaid block per scenario', () => {
    const md = markdownReport(run);
    expect(md).toContain('# Idempotency verification: FAILED');
    expect(md).toContain('| write-up | **FAIL** | 2 | 3 |');
    expect(md).toContain('- **effects** broken for `vfy-1`: expected exactly 1 effect(s), counted 2');
    expect(md.match(/```mermaid/g)).toHaveLength(2);
  });

  it('on a terminal, draws a live table: a running row per scenario that its result overwrites', () => {
    const out = { ...captureOutput(), isTTY: true };
    const progress = terminalProgress(out);
    progress.scenarioStarted?.(scenarioNamed('write-up'), 0, 2);
    progress.scenarioFinished?.(failed, 0, 2);
    const [running, result] = out.text().split('\r\x1b[2K');
    expect(running).toMatch(/^scenario\s+result\s+effects\s+attempts\s+time\nwrite-up\s+\.\.\.\s+\[1\/2\]$/);
    expect(result).toMatch(/^write-up\s+FAIL\s+2\s+3\s+2\.3s\n$/);
  });

  it('anywhere else, prints a plain line as each scenario starts and ends: no escapes, nothing redrawn', () => {
    const out = captureOutput();
    const progress = terminalProgress(out);
    progress.scenarioStarted?.(scenarioNamed('write-up'), 0, 2);
    progress.scenarioFinished?.(failed, 0, 2);
    progress.scenarioStarted?.(scenarioNamed('later-press'), 1, 2);
    progress.scenarioFinished?.(passed, 1, 2);
    expect(out.text()).toBe(
      [
        '[1/2] write-up started',
        '[1/2] write-up FAIL effects=2 attempts=3 time=2.3s',
        '[2/2] later-press started',
        '[2/2] later-press pass effects=2 attempts=0 time=2.3s',
        '',
      ].join('\n'),
    );
  });

  describe("a queue hop's deliveries", () => {
    const delivery = (fields: Partial<Attempt>): Attempt =>
      attempt({ hop: 'consumer', method: 'deliver', path: 'charges', status: null, outcome: 'acked', ...fields });
    const lostAck: ScenarioReport = {
      ...failed,
      name: 'lost-ack@consumer',
      attempts: [
        attempt({ seq: 1, hop: 'orders-v2', path: '/orders', status: 202 }),
        delivery({ seq: 2, delivery: { tag: 1, channel: 1, redelivered: false }, faults: ['lose ack'], outcome: 'ack-lost' }),
        delivery({ seq: 3, attempt: 2, delivery: { tag: 1, channel: 1, redelivered: true }, keyHash: null }),
      ],
    };
    const lines = [
      '    consumer d1 tag=1 charges k=1a2b3c4d [lose ack] -> ack lost',
      '    consumer d2 tag=1 redelivered charges k=none -> ack',
    ];

    it('are lines under the scenario row, on a terminal and elsewhere', () => {
      const piped = captureOutput();
      terminalProgress(piped).scenarioFinished?.(lostAck, 0, 1);
      expect(piped.text().split('\n')).toEqual(['[1/1] lost-ack@consumer FAIL effects=2 attempts=3 time=2.3s', ...lines, '']);
      const tty = { ...captureOutput(), isTTY: true };
      terminalProgress(tty).scenarioFinished?.(lostAck, 0, 1);
      expect(tty.text().split('\n').slice(2)).toEqual([...lines, '']);
    });

    it('are in the failure text, in JUnit and in the diagram, tag and redelivered flag with each', () => {
      expect(failureText(lostAck)).toContain(lines.join('\n'));
      const xml = junitReport({ ...run, scenarios: [lostAck, { ...lostAck, name: 'again', passed: true }] });
      expect(xml).toContain(`<system-out>${lines.map((l) => l.trim().replace('->', '-&#62;')).join('\n')}</system-out>\n    </testcase>`);
      expect(xml.match(/<system-out>/g)).toHaveLength(2);
      expect(sequenceDiagram(['orders-v2', 'consumer'], lostAck.attempts).split('\n').slice(4)).toEqual([
        '  caller->>h0: orders-v2 a1 k=1a2b3c4d',
        '  h0->>h1: consumer d1 tag=1 k=1a2b3c4d',
        '  Note over h1: d1 lose ack',
        '  h0->>h1: consumer d2 tag=1 redelivered k=none',
        '  h0-->>caller: a1 202',
        '  h1--xh0: d1 ack lost',
        '  h1-->>h0: d2 ack',
      ]);
    });
  });

  describe('a scenario skipped for want of config', () => {
    const reason = 'the deepest hop "payments" has no service for the verifier to start, kill and start again (set hops.1.service)';
    const withSkip: RunReport = { ...run, skipped: [{ name: 'kill', family: 'kill', reason }] };

    it('is a row of the table on a terminal and a line elsewhere, with its reason, and counted apart in the verdict', () => {
      const tty = { ...captureOutput(), isTTY: true };
      terminalSummary(withSkip, tty);
      expect(tty.text()).toMatch(new RegExp(`^kill\\s+skip\\s+because the deepest hop "payments" has no service`));
      expect(tty.text()).toContain('1/2 scenarios passed (1 skipped) in 4.0s');
      const piped = captureOutput();
      terminalSummary(withSkip, piped);
      expect(piped.text()).toMatch(/^skipped kill, because the deepest hop "payments" has no service .*\(set hops\.1\.service\)\n/);
    });

    it('is in report.md and in JUnit as skipped, because …', () => {
      expect(markdownReport(withSkip)).toContain(`| kill | skipped, because ${reason} | | |`);
      expect(markdownReport(withSkip)).toContain('1/2 scenarios passed (1 skipped)');
      const xml = junitReport(withSkip);
      expect(xml).toContain('tests="3" failures="1" skipped="1"');
      expect(xml).toContain(
        '<testcase classname="idempotency-verify" name="kill" time="0.000">\n      <skipped message="because the deepest hop &#34;payments&#34; has no service',
      );
    });
  });

  it('closes with every failure in full, then the verdict', () => {
    const out = captureOutput();
    terminalSummary(run, out);
    const text = out.text();
    expect(text).toContain('effects broken for intent vfy-1 (key 1a2b3c4d): expected exactly 1 effect(s), counted 2');
    expect(text).toContain('payments a1 POST /charges k=1a2b3c4d [hold 1500ms, lose-reply] -> 201 reply-lost');
    expect(text).toContain('1/2 scenarios passed in 4.0s');
  });
});
