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
    expect(broken(record({ laterPress: press('later press', { attempt: 1, status: 503, body: '' }) }), 1)).toEqual([
      'same-answer',
      'settled-no-5xx',
    ]);
    expect(broken(record({ laterPress: press('later press', lost) }), 1)).toEqual(['settled-no-5xx']);
  });

  it('wants a reused key with another body refused with a 4xx and no effect', () => {
    const reuse = (answer: CallerAnswer) =>
      record({ effects: 'none', presses: [], laterPress: undefined, refusedPress: press('other body', answer) });
    expect(broken(reuse({ attempt: 1, status: 422, body: '' }), 0)).toEqual([]);
    expect(broken(reuse(ok()), 1)).toEqual(['effects', 'refused']);
    expect(broken(reuse({ attempt: 1, status: 500, body: '' }), 0)).toEqual(['refused']);
  });
});
