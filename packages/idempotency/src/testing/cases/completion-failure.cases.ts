import assert from 'node:assert/strict';
import { IdempotencyCoordinator } from '../../coordinator';
import type { IdempotencyStore } from '../../store';
import { assertMatch } from '../assert-match';
import { charge, neverRuns, newKey, type AddCase, type Charge } from '../case-context';
import { Recorder } from '../recorder';

/** Where the first completion fails: before the store saw it, or after it stored it (the reply lost). */
type Failure = 'before the store' | 'with its reply lost';

/**
 * `store`, whose first `complete` fails as a dropped connection would; every
 * other call goes through untouched.
 */
function firstCompletionFails(store: IdempotencyStore, failure: Failure): IdempotencyStore {
  let failed = false;
  return new Proxy(store, {
    get(target, name) {
      if (name === 'complete') {
        return async (...args: Parameters<IdempotencyStore['complete']>) => {
          if (failed) return target.complete(...args);
          failed = true;
          if (failure === 'with its reply lost') await target.complete(...args);
          throw new Error('connection reset by peer');
        };
      }
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * A completion that fails once is not given up on: the side effect ran, so
 * it is stored by a retry while the execution still holds its key, and a
 * retry of the request (here from another process, with no memory of the
 * answer) replays it instead of running the action again.
 */
export function completionFailureCases(it: AddCase): void {
  for (const failure of ['before the store', 'with its reply lost'] as const) {
    it(`stores a result whose first completion failed ${failure}: one execution, and another process replays it`, async (setup) => {
      const { store } = await setup();
      const recorder = new Recorder();
      const faulty = firstCompletionFails(store, failure);
      // No replay cache: the answer must come from the store, not from this process's memory.
      const first = new IdempotencyCoordinator({ service: 'conformance', store: faulty, observer: recorder, replayCache: false });
      const other = new IdempotencyCoordinator({ service: 'conformance', store, replayCache: false });
      const request = charge(newKey());
      let executions = 0;
      const action = async (): Promise<Charge> => ({ statusCode: 201, body: { chargeId: `ch_${++executions}` } });

      assertMatch(await first.run(request, action), { replayed: false, value: { body: { chargeId: 'ch_1' } } });
      assert.deepEqual(recorder.outcomes(), ['store_error', 'executed']);
      assertMatch(await other.run(request, neverRuns), { replayed: true, value: { body: { chargeId: 'ch_1' } } });
      assert.equal(executions, 1);
    });
  }
}
