import type { LabEvent } from './timeline';

const NAMES: Record<string, string> = { caller: 'Caller', gateway: 'Gateway', orders: 'Orders', payments: 'Payments' };
const NEXT: Record<string, string> = { caller: 'Gateway', gateway: 'Orders', orders: 'Payments' };

interface Step {
  at: number;
  line: string;
}

/**
 * A Mermaid sequence diagram drawn from what was recorded: every attempt
 * each hop made (request arrow at its start, answer or loss at its end) and
 * every charge the ledger wrote.
 */
export function sequenceDiagram(events: LabEvent[], charges: Array<{ at: string; epoch: number }>, origin: number): string {
  const steps: Step[] = [];
  for (const attempt of events.filter((e) => e.event === 'attempt')) {
    const from = NAMES[attempt.service] as string;
    const to = NEXT[attempt.service] as string;
    const start = attempt.startedAt ?? attempt.time;
    const key = attempt.keyHash ? ` key ${attempt.keyHash.slice(0, 6)}` : ' no key';
    steps.push({ at: start, line: `${from}->>${to}: +${start - origin} ms ${attempt.path} #${attempt.attempt}${key}` });
    steps.push({ at: start + (attempt.durationMs ?? 0), line: answerLine(attempt, from, to) });
  }
  charges.forEach((charge, index) => {
    const at = Date.parse(charge.at);
    const fence = charge.epoch ? ` (epoch ${charge.epoch})` : '';
    steps.push({ at, line: `Note over Payments: +${at - origin} ms charge ${index + 1}${fence}` });
  });
  const body = steps.sort((a, b) => a.at - b.at).map((step) => `  ${step.line}`);
  return ['sequenceDiagram', '  participant Caller', '  participant Gateway', '  participant Orders', '  participant Payments', ...body].join('\n');
}

function answerLine(attempt: LabEvent, from: string, to: string): string {
  const ms = Math.round(attempt.durationMs ?? 0);
  switch (attempt.outcome) {
    case 'ok':
    case 'http-error':
      return `${to}-->>${from}: ${attempt.status}${attempt.replayed ? ' replayed' : ''} after ${ms} ms`;
    case 'timeout':
      return `${to}--x${from}: no answer: ${from} gave up after ${ms} ms`;
    case 'reset':
      return `${to}--x${from}: reply lost (connection closed) after ${ms} ms`;
    default:
      return `${to}--x${from}: ${attempt.outcome} after ${ms} ms`;
  }
}
