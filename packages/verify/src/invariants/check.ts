import type { CallerAnswer, Press } from '../run/caller';
import type { IntentRecord } from '../scenarios/scenario';

/**
 * The names of the invariants, as reports show them.
 *
 * @public
 */
export type InvariantName =
  'effects' | 'same-answer' | 'final-answer' | 'refused' | 'settled-final' | 'replay' | 'own-answer' | 'durable' | 'delivered';

/**
 * One broken invariant for one intent.
 *
 * @public
 */
export interface Violation {
  invariant: InvariantName;
  intentId: string;
  /** What was found, with the figures. */
  message: string;
}

/** What the invariants accept that a chain may choose. */
export interface CheckOptions {
  /** Statuses that refuse a reused key with another body (default `[422]`). */
  refusedStatuses?: readonly number[];
}

/**
 * 4xx statuses that are no final answer: in progress, a timeout or a rate limit.
 * Once the chain settled, a press answered with one of these was told nothing.
 */
const NOT_FINAL = new Set([408, 409, 425, 429]);

/**
 * Statuses that tell the caller "not yet" rather than an answer: the 4xx
 * above, and the 5xx of a hop that could not reach the next one in time
 * (502, 503, 504), after which a caller retries with the same key. Any other
 * 5xx (a 500) is an answer: a caller told it has been told the work failed.
 */
const NOT_YET = new Set([...NOT_FINAL, 502, 503, 504]);

/** Checks one intent's record against the invariants, given the effects counted once the chain settled. */
export function checkIntent(record: IntentRecord, effects: number, options: CheckOptions = {}): Violation[] {
  const found: Violation[] = [];
  const violate = (invariant: InvariantName, message: string) => found.push({ invariant, intentId: record.intentId, message });

  const answers = [...record.presses, ...(record.laterPress ? [record.laterPress] : [])].flatMap(given);
  const succeeded = answers.some((a) => isSuccess(a.status));
  const expected = record.effects === 'none' ? 0 : record.effects === 'once' || succeeded ? 1 : effects === 0 ? 0 : 1;
  if (effects !== expected) {
    violate('effects', `expected ${expectation(record.effects)} effect(s), counted ${effects}`);
  }

  // An in-progress 409 or a 502 while the chain still retried told the caller "not yet", not
  // another answer; settled-final and final-answer hold the chain to a final answer in the end.
  const distinct = new Map(answers.filter((a) => !NOT_YET.has(a.status as number)).map((a) => [fingerprint(a), a]));
  if (distinct.size > 1) {
    const shown = [...distinct.values()].map((a) => `${a.status} ${excerpt(a.body)}`);
    violate('same-answer', `the caller got ${distinct.size} different answers: ${shown.join(' | ')}`);
  }
  // A key stuck in progress answers 409 forever: tolerated between answers, never instead of one.
  if (answers.length > 0 && distinct.size === 0) {
    violate('final-answer', `none of the ${answers.length} answers the caller got was final (${statuses(answers)})`);
  }

  for (const refused of record.refusedPresses ?? []) {
    const refusedWith = options.refusedStatuses ?? [422];
    const status = final(refused)?.status ?? null;
    if (status === null || !refusedWith.includes(status)) {
      violate('refused', `the press "${refused.label}" got ${status ?? 'no answer'}, expected a refusal (${refusedWith.join(', ')})`);
    }
  }

  if (record.laterPress) {
    const later = final(record.laterPress);
    if (!later || !isFinal(later.status)) {
      const got = later?.status ?? later?.error ?? 'no answer';
      violate(
        'settled-final',
        `the press after the chain settled got ${got} after ${record.laterPress.answers.length} attempt(s), not a final answer (2xx, or a 4xx other than 408, 409, 425, 429)`,
      );
    } else {
      const earlier = firstFinal(record.presses);
      if (earlier && fingerprint(earlier) !== fingerprint(later)) {
        violate(
          'replay',
          `the later press got ${later.status} ${excerpt(later.body)}, not the replay of ${earlier.status} ${excerpt(earlier.body)}`,
        );
      }
    }
  }

  if (record.otherCallers) {
    const theirs = new Set(
      record.otherCallers
        .flatMap(given)
        .filter((a) => isSuccess(a.status))
        .map(fingerprint),
    );
    // Refused for reusing a key this caller never sent before: the chain took it for the other caller's.
    const refusedWith = options.refusedStatuses ?? [422];
    for (const press of record.presses) {
      const refused = given(press).find((a) => refusedWith.includes(a.status as number));
      if (refused) {
        const theirLabels = record.otherCallers.map((p) => `"${p.label}"`).join(', ');
        violate(
          'own-answer',
          `"${press.label}" was refused ${refused.status} ${excerpt(refused.body)} under the key ${theirLabels} had used: the chain does not tell the two callers apart`,
        );
      }
    }
    // The same text is evidence only when this caller's own execution did not happen: a chain
    // whose answers carry nothing per execution ("charged") answers both callers alike, each
    // after an effect of its own, and the count says so.
    const shared = answers.filter((a) => isSuccess(a.status) && theirs.has(fingerprint(a)));
    if (shared.length > 0 && effects < expected) {
      violate(
        'own-answer',
        `${shared.length} of the ${answers.length} answers were another caller's under the same key: ${shared[0]?.status} ${excerpt(shared[0]?.body ?? '')}`,
      );
    }
  }
  if (record.aroundKill && record.aroundKill.after < record.aroundKill.before) {
    const { before, after } = record.aroundKill;
    violate(
      'durable',
      `the effect store lost an effect in the crash: counted ${before} just before the kill, ${after} just after the restart`,
    );
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

/** The first answer the caller was told something final by: a success first, else a final 4xx. */
function firstFinal(presses: Press[]): CallerAnswer | undefined {
  const answers = presses.flatMap(given);
  return answers.find((a) => isSuccess(a.status)) ?? answers.find((a) => isFinal(a.status));
}

function isSuccess(status: number | null): boolean {
  return status !== null && status >= 200 && status < 300;
}

function isFinal(status: number | null): boolean {
  return status !== null && (isSuccess(status) || (status >= 400 && status < 500 && !NOT_FINAL.has(status)));
}

function statuses(answers: CallerAnswer[]): string {
  const counts = new Map<number | null, number>();
  for (const a of answers) counts.set(a.status, (counts.get(a.status) ?? 0) + 1);
  return [...counts].map(([status, n]) => `${status} x${n}`).join(', ');
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
