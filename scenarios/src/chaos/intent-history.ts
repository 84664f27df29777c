import type { LabEvent } from '../timeline';
import type { History, Intent } from './history';

/** How far around an intent's calls a fault is shown with its history. */
const FAULT_WINDOW_MS = 5000;

/** A time as seconds since the soak started. */
function at(history: History, time: number): string {
  return `+${((time - history.startedAt) / 1000).toFixed(3)}s`;
}

/** A service's log line, in one line: what a reader needs to follow the intent through the chain. */
function serviceLine(history: History, event: LabEvent): string {
  const e = event as LabEvent & { req?: { method?: string; url?: string; attempt?: number }; res?: { statusCode?: number }; msg?: string };
  const what =
    e.event === 'attempt'
      ? `-> ${e.path} attempt ${e.attempt}: ${e.outcome}${e.status ? ` ${e.status}` : ''}${e.replayed ? ' (replayed)' : ''}`
      : e.event === 'idempotency'
        ? `${e.operation}: ${e.outcome}${e.epoch ? ` epoch ${e.epoch}` : ''}`
        : e.req
          ? `<- ${e.req.method} ${e.req.url} attempt ${e.req.attempt}: ${e.res?.statusCode ?? e.msg}`
          : (e.msg ?? '');
  return `    ${at(history, e.time)} ${e.service.padEnd(8)} ${what}`;
}

/**
 * The full history of one intent, for a failed invariant: its calls and
 * their attempts as the caller saw them, the answers, the ledger's lines, the
 * faults around it, and what each service logged about its key.
 */
export function intentHistory(history: History, intent: Intent): string {
  const calls = history.calls.filter((call) => call.intent === intent.id);
  const attempts = history.attempts.filter((attempt) => attempt.intent === intent.id);
  const from = Math.min(...calls.map((call) => call.startedAt)) - FAULT_WINDOW_MS;
  const to = Math.max(...calls.map((call) => call.endedAt)) + FAULT_WINDOW_MS;
  const lines = [
    `intent ${intent.id}: order ${intent.orderId}, ${intent.amountCents} cents from ${intent.account}, key hash ${intent.keyHash}${intent.duplicate ? ', sent twice at once' : ''}`,
    '  calls:',
    ...calls.map(
      (call) =>
        `    ${at(history, call.startedAt)}..${at(history, call.endedAt)} caller ${call.caller} (${call.phase}), ${call.attempts} attempt(s): ` +
        (call.status !== undefined
          ? `${call.status}${call.replayed ? ' replayed' : ''} ${JSON.stringify(call.body)}`
          : `no answer (${call.error})`),
    ),
    '  attempts:',
    ...attempts.map(
      (a) =>
        `    ${at(history, a.startedAt)} attempt ${a.attempt} (${a.durationMs} ms): ${a.outcome}${a.status ? ` ${a.status}` : ''}${a.replayed ? ' replayed' : ''}`,
    ),
    '  ledger:',
    ...(history.ledger.get(intent.id) ?? []).map(
      (line) => `    ${line.chargeId} ${line.amountCents} cents, epoch ${line.epoch}, at ${line.at}`,
    ),
    '  faults around it:',
    ...history.faults
      .filter((fault) => fault.at >= from && fault.at <= to)
      .map(
        (fault) =>
          `    ${at(history, fault.at)} ${fault.kind} ${fault.target}${fault.how ? ` (${fault.how})` : ''}${fault.ms ? ` ${fault.ms} ms` : ''}`,
      ),
    '  services:',
    ...history.serviceEvents
      .filter((event) => event.keyHash !== undefined && history.intentOfKeyHash(event.keyHash) === intent.id)
      .map((event) => serviceLine(history, event)),
  ];
  return lines.join('\n');
}
