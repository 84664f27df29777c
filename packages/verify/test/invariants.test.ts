import { checkIntent } from '../src/invariants/check';
import type { CallerAnswer, Press } from '../src/run/caller';
import type { IntentRecord } from '../src/scenarios/scenario';

const ok = (body = '{"charge":1}'): CallerAnswer => ({ attempt: 1, status: 201, body });
const lost: CallerAnswer = { attempt: 1, status: null, body: '', error: 'timeout' };
const press = (label: string, ...answers: CallerAnswer[]): Press => ({
  label,
  intentId: 'i1',
  key: 'k',
  answers: answers.map((a, i) => ({ ...a, attempt: i + 1 })),
});
const record = (fields: Partial<IntentRecord>): IntentRecord => ({
  intentId: 'i1',
  key: 'k',
  effects: 'once',
  presses: [press('press', lost, ok())],
  laterPress: press('later press', ok()),
  ...fields,
});
const broken = (r: IntentRecord, effects: number) => checkIntent(r, effects).map((v) => v.invariant);

describe('invariants per intent', () => {
  it('holds for one effect, one answer and a replay, timeouts aside', () => {
    expect(checkIntent(record({}), 1)).toEqual([]);
  });

  it('counts effects against what the intent allows', () => {
    expect(broken(record({}), 2)).toEqual(['effects']);
    expect(broken(record({}), 0)).toEqual(['effects']);
    expect(checkIntent(record({}), 2)[0]?.message).toBe('expected exactly 1 effect(s), counted 2');
  });

  it('lets a keyless press that got no answer leave none, never two', () => {
    const keyless = record({ key: undefined, effects: 'at-most-once', presses: [press('press', lost)], laterPress: undefined });
    expect(broken(keyless, 0)).toEqual([]);
    expect(broken(keyless, 1)).toEqual([]);
    expect(broken(keyless, 2)).toEqual(['effects']);
    expect(broken({ ...keyless, presses: [press('press', ok())] }, 0)).toEqual(['effects']);
  });

  it('treats an explicit in-progress as no other answer, but a different body as one', () => {
    const inProgress = { attempt: 1, status: 409, body: 'busy' };
    expect(broken(record({ presses: [press('c1', ok()), press('c2', inProgress, ok())] }), 1)).toEqual([]);
    expect(broken(record({ presses: [press('c1', ok()), press('c2', ok('{"charge":2}'))] }), 1)).toEqual(['same-answer']);
  });

  it('wants the later press to replay the answer and never be a 5xx', () => {
    expect(broken(record({ laterPress: press('later press', ok('{"charge":2}')) }), 1)).toEqual(['same-answer', 'replay']);
    expect(broken(record({ laterPress: press('later press', { attempt: 1, status: 503, body: '' }) }), 1)).toEqual(['settled-final']);
    expect(broken(record({ laterPress: press('later press', lost) }), 1)).toEqual(['settled-final']);
  });

  it('fails a key stuck in progress: 409 on every press, the later one included, with one effect', () => {
    const inFlight = (): CallerAnswer => ({ attempt: 1, status: 409, body: '{"type":"in-flight"}' });
    const stuck = record({ presses: [press('press', inFlight(), inFlight())], laterPress: press('later press', inFlight()) });
    expect(broken(stuck, 1)).toEqual(['final-answer', 'settled-final']);
    expect(checkIntent(stuck, 1)[0]?.message).toBe('none of the 3 answers the caller got was final (409 x3)');
    expect(checkIntent(stuck, 1)[1]?.message).toContain('got 409 after 1 attempt(s), not a final answer');
    // Without a later press too: in progress is never the only answer.
    expect(broken(record({ presses: [press('press', inFlight(), { ...inFlight(), status: 425 })], laterPress: undefined }), 1)).toEqual([
      'final-answer',
    ]);
  });

  it('takes a 502, 503 or 504 while the chain still retried as no answer yet, never as the only one', () => {
    const failed = (code: number): CallerAnswer => ({ attempt: 1, status: code, body: '{"title":"Bad Gateway"}' });
    expect(broken(record({ presses: [press('press', failed(502), ok())] }), 1)).toEqual([]);
    expect(broken(record({ presses: [press('c1', failed(503), ok()), press('c2', failed(504), ok())] }), 1)).toEqual([]);
    // A 500 is an answer: a caller told "it failed" orders again, under a new key.
    expect(broken(record({ presses: [press('c1', ok()), press('c2', failed(500))] }), 1)).toEqual(['same-answer']);
    expect(broken(record({ presses: [press('press', failed(500), ok())] }), 1)).toEqual(['same-answer']);
    const neverAnswered = record({ presses: [press('press', failed(502), failed(504))], laterPress: press('later press', failed(502)) });
    expect(broken(neverAnswered, 1)).toEqual(['final-answer', 'settled-final']);
    expect(checkIntent(neverAnswered, 1)[0]?.message).toBe('none of the 3 answers the caller got was final (502 x2, 504 x1)');
  });

  it('wants the settled press final: 2xx, or the replay of a final 4xx', () => {
    const status = (code: number, body = ''): CallerAnswer => ({ attempt: 1, status: code, body });
    for (const code of [408, 425, 429]) {
      expect(broken(record({ laterPress: press('later press', status(code)) }), 1)).toContain('settled-final');
    }
    const rejected = record({ effects: 'none', presses: [press('press', status(400, 'bad'))] });
    expect(broken({ ...rejected, laterPress: press('later press', status(400, 'bad')) }, 0)).toEqual([]);
    expect(broken({ ...rejected, laterPress: press('later press', status(404, 'gone')) }, 0)).toEqual(['same-answer', 'replay']);
    // In progress while the chain works, then the answer: fine.
    expect(broken(record({ presses: [press('press', status(409), ok())] }), 1)).toEqual([]);
  });

  it("wants an answer of the intent's own, not another caller's under the same key", () => {
    const theirs = [press('caller 1 press', ok('{"charge":1,"tenant":"acme"}'))];
    expect(broken(record({ otherCallers: theirs }), 1)).toEqual([]);
    const copied = record({
      presses: [press('press', ok('{"charge":1,"tenant":"acme"}'))],
      laterPress: press('later press', ok('{"charge":1,"tenant":"acme"}')),
      otherCallers: theirs,
    });
    expect(broken(copied, 0)).toEqual(['effects', 'own-answer']);
    // Answers that carry nothing per execution: alike for both callers, each after its own effect.
    const alike = [press('caller 1 press', ok('{"status":"charged"}'))];
    expect(
      broken(
        record({
          presses: [press('press', ok('{"status":"charged"}'))],
          laterPress: press('later press', ok('{"status":"charged"}')),
          otherCallers: alike,
        }),
        1,
      ),
    ).toEqual([]);
    expect(checkIntent(copied, 0)[1]?.message).toBe(
      '2 of the 2 answers were another caller\'s under the same key: 201 {"charge":1,"tenant":"acme"}',
    );
  });

  it('wants an effect counted before a kill still counted after the restart', () => {
    const killed = (before: number, after: number) => record({ aroundKill: { before, after } });
    expect(broken(killed(1, 1), 1)).toEqual([]);
    expect(checkIntent(killed(1, 0), 1)).toEqual([
      expect.objectContaining({
        invariant: 'durable',
        message: 'the effect store lost an effect in the crash: counted 1 just before the kill, 0 just after the restart',
      }),
    ]);
  });

  it('wants a reused key with another body refused with 422 and no effect', () => {
    const reuse = (answer: CallerAnswer) =>
      record({ effects: 'none', presses: [], laterPress: undefined, refusedPresses: [press('same key, amount changed', answer)] });
    const status = (code: number): CallerAnswer => ({ attempt: 1, status: code, body: '' });
    expect(broken(reuse(status(422)), 0)).toEqual([]);
    expect(broken(reuse(ok()), 1)).toEqual(['effects', 'refused']);
    for (const code of [401, 403, 409, 500]) expect(broken(reuse(status(code)), 0)).toEqual(['refused']);
    expect(checkIntent(reuse(status(409)), 0)[0]?.message).toBe('the press "same key, amount changed" got 409, expected a refusal (422)');
    expect(checkIntent(reuse(status(400)), 0, { refusedStatuses: [400, 422] })).toEqual([]);
  });
});
