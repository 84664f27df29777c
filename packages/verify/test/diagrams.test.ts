import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkMarkdownFile, type DiagramReport } from '@idempotency-chain/diagram-check';
import type { Attempt, AttemptOutcome } from '../src/proxy/attempt';
import { markdownReport } from '../src/reports/markdown';
import type { RunReport, ScenarioReport } from '../src/run/report';

// Mermaid runs in a child process; give a loaded machine room.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

/** Text Mermaid reads as syntax, or that is merely awkward: every field a label can be drawn from gets it. */
const HOSTILE = [
  'semi;colon',
  'hash#35;entity',
  'colon: here',
  'arrow-->>h0 and --x too',
  '%% not a comment',
  'line<br>break<br/>',
  'new\nline\rand\ttab',
  'ünïcødé 支付 🚀',
  '{curly} [square] (round) "quoted" \'single\' `tick`',
  'amp & lt < gt >',
  'back\\slash',
  'end',
  'Note over h0: injected',
  '/charges/'.padEnd(2000, 'x'),
];

const OUTCOMES: Array<AttemptOutcome | 'in-flight'> = ['answered', 'reply-lost', 'reset', 'upstream-failed', 'caller-gone', 'in-flight'];
/** A queue hop's deliveries end in these: each is drawn as a delivery (tag, redelivered flag) and its settlement. */
const SETTLEMENTS: AttemptOutcome[] = ['acked', 'ack-lost', 'killed-before-ack', 'requeued', 'rejected', 'unsettled'];

function attempts(hops: string[]): Attempt[] {
  return HOSTILE.flatMap((text, i) => {
    const hop = hops[i % hops.length] as string;
    const outcome = OUTCOMES[i % OUTCOMES.length] as AttemptOutcome | 'in-flight';
    const settled = SETTLEMENTS[i % SETTLEMENTS.length] as AttemptOutcome;
    return [
      {
        seq: HOSTILE.length + i + 1,
        scenario: text,
        intent: text,
        hop,
        attempt: i + 1,
        ...(i % 3 === 0 ? { duplicateOf: i } : {}),
        delivery: { tag: i + 1, channel: 1, redelivered: i % 2 === 0 },
        method: 'deliver',
        path: text,
        keyHash: text,
        faults: [text],
        status: null,
        outcome: settled,
        startedMs: i * 10 + 1,
        endedMs: i * 10 + 7,
      },
      {
        seq: i + 1,
        scenario: text,
        intent: text,
        hop,
        attempt: i + 1,
        ...(i % 3 === 0 ? { duplicateOf: i } : {}),
        method: text,
        path: `/p/${text}`,
        keyHash: text,
        faults: [text, `hold ${i}ms`],
        status: i % 2 === 0 ? 201 : null,
        outcome,
        startedMs: i * 10,
        endedMs: outcome === 'in-flight' ? null : i * 10 + 5,
      },
    ];
  });
}

function scenario(name: string, hops: string[]): ScenarioReport {
  return {
    name,
    description: name,
    passed: false,
    durationMs: 1,
    intents: [
      {
        intentId: name,
        keyHash: name,
        expected: 'once',
        effects: 2,
        presses: [{ label: name, answers: [{ attempt: 1, status: null, error: name }] }],
      },
    ],
    violations: [{ invariant: 'effects', intentId: name, message: name }],
    attempts: attempts(hops),
  };
}

async function check(markdown: string): Promise<DiagramReport> {
  const dir = mkdtempSync(join(tmpdir(), 'verify-diagrams-'));
  try {
    const file = join(dir, 'report.md');
    writeFileSync(file, markdown);
    return await checkMarkdownFile(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the Markdown report, as Mermaid reads it', () => {
  it('keeps every message and note whole whatever the hops, keys, faults and paths hold', async () => {
    const hops = HOSTILE.slice(0, 5);
    const run: RunReport = {
      config: 'chain;#.yaml',
      startedAt: '2026-01-01T00:00:00.000Z',
      durationMs: 1,
      skipped: [],
      passed: false,
      hops,
      scenarios: HOSTILE.map((text) => scenario(text, hops)),
    };
    const report = await check(markdownReport(run));
    expect(report.errors).toEqual([]);
    expect(report.diagrams).toBe(HOSTILE.length);
    // Per attempt or delivery a request and a note; a reply unless it is still in flight.
    const perDiagram = attempts(hops).length * 2 + attempts(hops).filter((a) => a.endedMs !== null).length;
    expect(report.messages).toHaveLength(HOSTILE.length * perDiagram);
    expect(report.messages.filter((m) => !m.whole)).toEqual([]);
  });
});
