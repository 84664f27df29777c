import type { LabEvent } from './timeline';

const NAMES: Record<string, string> = { caller: 'Caller', gateway: 'Gateway', orders: 'Orders', payments: 'Payments' };
const NEXT: Record<string, string> = { caller: 'Gateway', gateway: 'Orders', orders: 'Payments' };

interface Step {
  at: number;
  line: string;
}

/**
 * Text Mermaid keeps whole in a message or a note. Its sequence grammar
 * reads `#` as the start of a comment and `;` as the end of a statement, so
 * either would cut the rest of the line off (or break the diagram) on
 * GitHub; line breaks would end the message.
 */
export function mermaidText(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').replace(/#/g, 'no. ').replace(/;/g, ',');
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
 * A Mermaid sequence diagram drawn from what was recorded: every attempt
 * each hop made (request arrow at its start, answer or loss at its end, both
 * naming the attempt and its key) and every charge the ledger wrote, with its
 * fencing epoch relative to the run's first claim.
 */
export function sequenceDiagram(events: LabEvent[], charges: Array<{ at: string; epoch: number }>, origin: number): string {
  const steps: Step[] = [];
  for (const attempt of events.filter((e) => e.event === 'attempt')) {
    const from = NAMES[attempt.service] as string;
    const to = NEXT[attempt.service] as string;
    const start = attempt.startedAt ?? attempt.time;
    steps.push({ at: start, line: `${from}->>${to}: ${mermaidText(`+${start - origin} ms ${attempt.path}, ${attemptLabel(attempt)}`)}` });
    steps.push({ at: start + (attempt.durationMs ?? 0), line: answerLine(attempt, from, to) });
  }
  const epochZero = firstEpoch(events, charges);
  charges.forEach((charge, index) => {
    const at = Date.parse(charge.at);
    const fence = charge.epoch && epochZero !== undefined ? `, epoch +${charge.epoch - epochZero} since the first claim` : '';
    steps.push({ at, line: `Note over Payments: ${mermaidText(`+${at - origin} ms charge ${index + 1}${fence}`)}` });
  });
  const body = steps.sort((a, b) => a.at - b.at).map((step) => `  ${step.line}`);
  return ['sequenceDiagram', '  participant Caller', '  participant Gateway', '  participant Orders', '  participant Payments', ...body].join('\n');
}

function answerLine(attempt: LabEvent, from: string, to: string): string {
  const ms = Math.round(attempt.durationMs ?? 0);
  const which = attemptLabel(attempt);
  switch (attempt.outcome) {
    case 'ok':
    case 'http-error':
      return `${to}-->>${from}: ${mermaidText(`${which}: ${attempt.status}${attempt.replayed ? ' replayed' : ''} after ${ms} ms`)}`;
    case 'timeout':
      return `${to}--x${from}: ${mermaidText(`${which}: no answer, ${from} gave up after ${ms} ms`)}`;
    case 'deadline':
      return `${to}--x${from}: ${mermaidText(`${which}: no answer before ${from}'s deadline ran out, after ${ms} ms`)}`;
    case 'reset':
      return `${to}--x${from}: ${mermaidText(`${which}: reply lost (connection closed) after ${ms} ms`)}`;
    default:
      return `${to}--x${from}: ${mermaidText(`${which}: ${attempt.outcome} after ${ms} ms`)}`;
  }
}
