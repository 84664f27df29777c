import type { LabEvent } from './timeline';

/** The participants of the chain's sequence diagrams, outermost first. */
export const PARTICIPANTS = ['Caller', 'Gateway', 'Orders', 'Payments'] as const;
export type Participant = (typeof PARTICIPANTS)[number];

const NAMES: Record<string, Participant> = { caller: 'Caller', gateway: 'Gateway', orders: 'Orders', payments: 'Payments' };
const NEXT: Record<string, Participant> = { caller: 'Gateway', gateway: 'Orders', orders: 'Payments' };

/**
 * One line of a sequence diagram, before it is drawn: an attempt's request,
 * its answer or its loss (from the answering hop back to the caller), or a
 * charge the ledger wrote (a note over `from`). RESULTS.md draws these as
 * Mermaid; the lab console draws the same steps in the browser.
 */
export interface SequenceStep {
  /** When it happened (epoch ms): steps are in this order. */
  at: number;
  kind: 'request' | 'answer' | 'lost' | 'charge';
  from: Participant;
  to: Participant;
  /** The label, as recorded (not yet escaped for any renderer). */
  text: string;
  /** An answer a hop gave from its store. */
  replayed?: boolean;
}

/**
 * Text Mermaid keeps whole in a message or a note. Its sequence grammar
 * reads `#` as the start of a comment and `;` as the end of a statement, so
 * either would cut the rest of the line off (or break the diagram) on
 * GitHub; line breaks would end the message.
 */
export function mermaidText(text: string): string {
  return text
    .replace(/[\r\n]+/g, ' ')
    .replace(/#/g, 'no. ')
    .replace(/;/g, ',');
}

/** Which attempt of which key an arrow belongs to, e.g. `attempt 2, key 2a5d0e`. */
export function attemptLabel(attempt: LabEvent): string {
  const key = attempt.keyHash ? `key ${attempt.keyHash.slice(0, 6)}` : 'no key';
  return `attempt ${attempt.attempt ?? 1}, ${key}`;
}

/**
 * The first fencing epoch of a run: epochs are seeded from the store's clock
 * in milliseconds, so a 13-digit number says nothing until it is shown
 * relative to this one.
 */
export function firstEpoch(events: LabEvent[], charges: Array<{ epoch: number }>): number | undefined {
  const epochs = [...events.map((e) => e.epoch ?? 0), ...charges.map((c) => c.epoch)].filter((epoch) => epoch > 0);
  return epochs.length > 0 ? Math.min(...epochs) : undefined;
}

/**
 * The steps of one run, in time order: every attempt each hop made (request
 * at its start, answer or loss at its end, both naming the attempt and its
 * key) and every charge the ledger wrote, with its fencing epoch relative to
 * the run's first claim. Times in labels are relative to `origin`.
 */
export function sequenceSteps(events: LabEvent[], charges: Array<{ at: string; epoch: number }>, origin: number): SequenceStep[] {
  const steps: SequenceStep[] = [];
  for (const attempt of events.filter((e) => e.event === 'attempt')) {
    const from = NAMES[attempt.service] as Participant;
    const to = NEXT[attempt.service] as Participant;
    const start = attempt.startedAt ?? attempt.time;
    steps.push({ at: start, kind: 'request', from, to, text: `+${start - origin} ms ${attempt.path}, ${attemptLabel(attempt)}` });
    steps.push({ at: start + (attempt.durationMs ?? 0), from: to, to: from, ...answerStep(attempt, from) });
  }
  const epochZero = firstEpoch(events, charges);
  charges.forEach((charge, index) => {
    const at = Date.parse(charge.at);
    const fence = charge.epoch && epochZero !== undefined ? `, epoch +${charge.epoch - epochZero} since the first claim` : '';
    steps.push({ at, kind: 'charge', from: 'Payments', to: 'Payments', text: `+${at - origin} ms charge ${index + 1}${fence}` });
  });
  return steps.sort((a, b) => a.at - b.at);
}

/**
 * A Mermaid sequence diagram of `sequenceSteps`: requests `->>`, answers
 * `-->>`, losses `--x`, charges as notes over payments.
 */
export function sequenceDiagram(events: LabEvent[], charges: Array<{ at: string; epoch: number }>, origin: number): string {
  const body = sequenceSteps(events, charges, origin).map((step) => `  ${mermaidLine(step)}`);
  return ['sequenceDiagram', ...PARTICIPANTS.map((name) => `  participant ${name}`), ...body].join('\n');
}

const ARROWS: Record<Exclude<SequenceStep['kind'], 'charge'>, string> = { request: '->>', answer: '-->>', lost: '--x' };

function mermaidLine(step: SequenceStep): string {
  if (step.kind === 'charge') return `Note over ${step.from}: ${mermaidText(step.text)}`;
  return `${step.from}${ARROWS[step.kind]}${step.to}: ${mermaidText(step.text)}`;
}

function answerStep(attempt: LabEvent, from: string): Pick<SequenceStep, 'kind' | 'text' | 'replayed'> {
  const ms = Math.round(attempt.durationMs ?? 0);
  const which = attemptLabel(attempt);
  switch (attempt.outcome) {
    case 'ok':
    case 'http-error':
      return {
        kind: 'answer',
        text: `${which}: ${attempt.status}${attempt.replayed ? ' replayed' : ''} after ${ms} ms`,
        ...(attempt.replayed && { replayed: true }),
      };
    case 'timeout':
      return { kind: 'lost', text: `${which}: no answer, ${from} gave up after ${ms} ms` };
    case 'deadline':
      return { kind: 'lost', text: `${which}: no answer before ${from}'s deadline ran out, after ${ms} ms` };
    case 'reset':
      return { kind: 'lost', text: `${which}: reply lost (connection closed) after ${ms} ms` };
    default:
      return { kind: 'lost', text: `${which}: ${attempt.outcome} after ${ms} ms` };
  }
}
