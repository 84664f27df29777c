import type { LabEvent, Service } from '@idempotency-chain/scenarios';
import { STATUS_CODES } from 'node:http';
import type { AnswerView } from './snapshot';

/** Whose store answered when a hop's attempt was replayed. */
const ANSWERED_BY: Record<string, Service> = { caller: 'gateway', gateway: 'orders', orders: 'payments' };
/** Outermost first: the hop the caller sees first. */
const DEPTH = ['caller', 'gateway', 'orders'];

const NO_ANSWER: Record<string, string> = {
  timeout: 'no answer within the caller’s budget',
  deadline: 'no answer before the caller’s deadline',
  reset: 'reply lost (connection closed)',
  refused: 'refused: nothing listens at the gateway',
};

function started(event: LabEvent): number {
  return event.startedAt ?? event.time;
}

function ended(event: LabEvent): number {
  return started(event) + (event.durationMs ?? 0);
}

/**
 * Which hop answered `call` from its store: the gateway when the caller's
 * answer says so, else the outermost hop whose attempt during the call was
 * replayed. Only a call that overlaps no other can own the attempts made in
 * its time; concurrent clicks are judged by their own answer alone.
 */
function replayedBy(call: LabEvent, calls: LabEvent[], events: LabEvent[]): Service | undefined {
  if (call.replayed) return 'gateway';
  if (calls.some((other) => other !== call && started(other) < ended(call) && started(call) < ended(other))) return undefined;
  const replays = events.filter(
    (e) => e.event === 'attempt' && e.service !== 'caller' && e.replayed && started(e) >= started(call) && started(e) <= ended(call),
  );
  replays.sort((a, b) => DEPTH.indexOf(a.service) - DEPTH.indexOf(b.service));
  return replays[0] ? ANSWERED_BY[replays[0].service] : undefined;
}

function answerText(call: LabEvent): string {
  const ms = `after ${Math.round(call.durationMs ?? 0)} ms`;
  if (typeof call.status === 'number') return `${call.status} ${STATUS_CODES[call.status] ?? ''} ${ms}`.replace(/\s+/g, ' ');
  return `${NO_ANSWER[call.outcome ?? ''] ?? `no answer (${call.outcome})`} ${ms}`;
}

/**
 * The caller's answers, one per press, from the caller's attempts in the
 * timeline (one attempt per press), in the order the presses started;
 * `labels` names every press made so far, and those not answered yet are
 * pending.
 */
export function answersOf(events: LabEvent[], labels: string[]): AnswerView[] {
  const calls = events.filter((e) => e.event === 'attempt' && e.service === 'caller').sort((a, b) => started(a) - started(b));
  return labels.map((label, index) => {
    const call = calls[index];
    if (!call) return { label, pending: true, text: 'waiting for an answer' };
    const by = replayedBy(call, calls, events);
    return {
      label,
      pending: false,
      ...(typeof call.status === 'number' && { status: call.status }),
      text: answerText(call),
      ...(by && { replayedBy: by }),
    };
  });
}
