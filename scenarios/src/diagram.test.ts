import { checkDiagramTexts, type DiagramReport } from '@idempotency-chain/diagram-check';
import { attemptLabel, firstEpoch, mermaidText, sequenceDiagram, sequenceSteps } from './diagram';
import type { LabEvent } from './timeline';

// Mermaid runs in a child process; give a loaded machine room.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const T0 = 1_800_000_000_000;
const KEY_A = 'a1b2c3d4e5f6';
const KEY_B = '0f9e8d7c6b5a';

function attempt(service: LabEvent['service'], at: number, fields: Partial<LabEvent>): LabEvent {
  return { service, event: 'attempt', time: T0 + at, startedAt: T0 + at, durationMs: 100, attempt: 1, ...fields };
}

/** Every way an attempt can end, with and without keys, including text Mermaid would cut. */
const EVENTS: LabEvent[] = [
  attempt('caller', 0, { path: '/checkout', keyHash: KEY_A, outcome: 'http-error', status: 502, durationMs: 1300 }),
  attempt('gateway', 10, { path: '/orders', keyHash: KEY_A, outcome: 'timeout', durationMs: 600 }),
  attempt('gateway', 620, { path: '/orders', attempt: 2, keyHash: KEY_B, outcome: 'reset', durationMs: 300 }),
  attempt('orders', 30, { path: '/charges', keyHash: KEY_A, outcome: 'timeout', durationMs: 300 }),
  attempt('orders', 340, { path: '/charges', attempt: 2, keyHash: KEY_A, outcome: 'deadline', durationMs: 250 }),
  attempt('orders', 640, { path: '/charges', outcome: 'ok', status: 201, replayed: true, durationMs: 20 }),
  attempt('orders', 700, { path: 'queue delivery #2; redelivered', attempt: 3, outcome: 'killed before ack', durationMs: 5 }),
  { service: 'payments', event: 'idempotency', time: T0 + 40, outcome: 'executed', epoch: T0 + 35 },
];
const CHARGES = [
  { at: new Date(T0 + 45).toISOString(), epoch: T0 + 35 },
  { at: new Date(T0 + 660).toISOString(), epoch: T0 + 667 },
  { at: new Date(T0 + 900).toISOString(), epoch: 0 },
];

describe('sequence diagrams, as Mermaid reads them', () => {
  const diagram = sequenceDiagram(EVENTS, CHARGES, T0);
  let report: DiagramReport;

  beforeAll(async () => {
    report = await checkDiagramTexts([diagram]);
  });

  it('keeps every message and note whole, the characters Mermaid would cut included', () => {
    expect(report.errors).toEqual([]);
    expect(report.messages).toHaveLength(EVENTS.filter((e) => e.event === 'attempt').length * 2 + CHARGES.length);
    expect(report.messages.filter((m) => !m.whole)).toEqual([]);
  });

  it('names the attempt and the key on the request and on its answer', () => {
    const parsed = report.messages.map((m) => m.parsed ?? '');
    for (const event of EVENTS.filter((e) => e.event === 'attempt')) {
      const label = attemptLabel(event);
      const same = EVENTS.filter((e) => e.event === 'attempt' && attemptLabel(e) === label).length;
      expect({ label, messages: parsed.filter((text) => text.includes(label)).length }).toEqual({ label, messages: 2 * same });
    }
    expect(parsed.filter((text) => text.includes(`key ${KEY_A.slice(0, 6)}`))).toHaveLength(8);
    expect(parsed.filter((text) => text.includes('no key'))).toHaveLength(4);
  });

  it('shows fencing epochs relative to the first claim, never as 13 digits', () => {
    const notes = report.messages.map((m) => m.parsed ?? '').filter((text) => /charge \d/.test(text));
    expect(diagram).not.toMatch(/\d{13}/);
    expect(notes).toEqual([
      '+45 ms charge 1, epoch +0 since the first claim',
      '+660 ms charge 2, epoch +632 since the first claim',
      '+900 ms charge 3',
    ]);
    expect(firstEpoch(EVENTS, CHARGES)).toBe(T0 + 35);
  });

  it('writes labels without the characters Mermaid treats as syntax', () => {
    expect(mermaidText('delivery #2; redelivered\nagain')).toBe('delivery no. 2, redelivered again');
  });
});

describe('sequence steps, before any renderer', () => {
  const steps = sequenceSteps(EVENTS, CHARGES, T0);

  it('are the lines of the Mermaid diagram, in its order, with the text unescaped', () => {
    const lines = sequenceDiagram(EVENTS, CHARGES, T0).split('\n').slice(5);
    expect(steps).toHaveLength(lines.length);
    expect(steps.map((s) => s.at)).toEqual([...steps.map((s) => s.at)].sort((a, b) => a - b));
    expect(steps.find((s) => s.text.includes('queue delivery #2; redelivered'))).toMatchObject({
      kind: 'request',
      from: 'Orders',
      to: 'Payments',
    });
  });

  it('send each answer from the hop that gave it, and mark what a store replayed', () => {
    const answers = steps.filter((s) => s.kind === 'answer');
    expect(answers.map((s) => [s.from, s.to, Boolean(s.replayed)])).toEqual([
      ['Payments', 'Orders', true],
      ['Gateway', 'Caller', false],
    ]);
    expect(steps.filter((s) => s.kind === 'lost')).toHaveLength(5);
    expect(steps.filter((s) => s.kind === 'charge').map((s) => s.from)).toEqual(['Payments', 'Payments', 'Payments']);
  });
});
