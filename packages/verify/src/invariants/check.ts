import type { CallerAnswer, Press } from '../run/caller';
import type { IntentRecord } from '../scenarios/scenario';

/** The names of the invariants, as reports show them. */
export type InvariantName = 'effects' | 'same-answer' | 'refused' | 'settled-no-5xx' | 'replay';

/** One broken invariant for one intent. */
export interface Violation {
  invariant: InvariantName;
  intentId: string;
  /** What was found, with the figures. */
  message: string;
}

/**
 * Statuses that say "still working on it" rather than giving another answer: a
 * caller may see them between the answers without the answers differing.
 */
const IN_PROGRESS = new Set([409, 425]);

/** Checks one intent's record against the invariants, given the effects counted once the chain settled. */
export function checkIntent(record: IntentRecord, effects: number): Violation[] {
  const found: Violation[] = [];
  const violate = (invariant: InvariantName, message: string) =>
    found.push({ invariant, intentId: record.intentId, message });

  const answers = [...record.presses, ...(record.laterPress ? [record.laterPress] : [])].flatMap(given);
  const succeeded = answers.some((a) => isSuccess(a.status));
  const expected = record.effects === 'none' ? 0 : record.effects === 'once' || succeeded ? 1 : effects === 0 ? 0 : 1;
  if (effects !== expected) {
    violate('effects', `expected ${expectation(record.effects)} effect(s), counted ${effects}`);
  }

  const distinct = new Map(answers.filter((a) => !IN_PROGRESS.has(a.status as number)).map((a) => [fingerprint(a), a]));
  if (distinct.size > 1) {
    const shown = [...distinct.values()].map((a) => `${a.status} ${excerpt(a.body)}`);
    violate('same-answer', `the caller got ${distinct.size} different answers: ${shown.join(' | ')}`);
  }

  if (record.refusedPress) {
    const status = final(record.refusedPress)?.status ?? null;
    if (status === null || status < 400 || status >= 500) {
      violate('refused', `a reused key with another body got ${status ?? 'no answer'}, expected a 4xx refusal`);
    }
  }

  if (record.laterPress) {
    const later = final(record.laterPress);
    if (!later || later.status === null || later.status >= 500) {
      violate('settled-no-5xx', `the press after the chain settled got ${later?.status ?? later?.error ?? 'no answer'}`);
    } else {
      const earlier = record.presses.flatMap(given).find((a) => isSuccess(a.status));
      if (earlier && fingerprint(earlier) !== fingerprint(later)) {
        violate('replay', `the later press got ${later.status} ${excerpt(later.body)}, not the replay of ${earlier.status} ${excerpt(earlier.body)}`);
      }
    }
  }
  return found;
}

/** Answers that came back (timeouts and resets are no answers). */
function given(press: Press): CallerAnswer[] {
  return press.answers.filter((a) => a.status !== null);
}

function final(press: Press): CallerAnswer | undefined {
  return press.answers[press.answers.length - 1];
}

function isSuccess(status: number | null): boolean {
  return status !== null && status >= 200 && status < 300;
}

function fingerprint(answer: CallerAnswer): string {
  return `${answer.status} ${answer.body}`;
}

function expectation(effects: IntentRecord['effects']): string {
  return effects === 'once' ? 'exactly 1' : effects === 'none' ? '0' : 'at most 1';
}

function excerpt(body: string): string {
  return body.length > 60 ? `${body.slice(0, 60)}…` : body;
}
