import { randomUUID } from 'node:crypto';
import type { Lab } from '../lab-processes';
import type { Scenario } from '../scenario';
import { failureScenario } from './failure-scenario';
import { checkout, newOrder, runVariant } from './support';

/**
 * Which outcomes are stored decides whether a retry helps. A transient 503
 * before the charge must release the key so the retry charges once; a final
 * answer (the card was declined) must be stored, so pressing again replays
 * the decline instead of charging a card the user was told was declined.
 */
export const failureBeforeCommit: Scenario = failureScenario({
  id: 'failure-before-commit',
  title: 'Failure before commit: a transient 503, and a final decline',
  broke:
    'Storing a transient failure turns one 503 into a permanent one: every retry replays it and the order is never paid. Not storing a final answer lets a retry re-run it: a declined card is charged on the next press.',
  fix: 'One named rule decides: success and definitive 4xx are stored and replayed; 5xx, thrown errors and 400/408/409/425/429 release the key so the retry runs normally.',
  code: 'packages/idempotency/src/outcome.ts: `isFinalOutcome`',
  async variants(context) {
    const transient = (lab: Lab) => async () => {
      await lab.arm('payments', { failBeforeSideEffect: 1 });
      const order = newOrder('transient');
      const answer = await checkout(lab, order, randomUUID());
      return {
        orderId: order.orderId,
        outcome: `payments failed once with 503, orders retried: the caller got ${answer.status}`,
        details: { status: answer.status },
      };
    };
    const declined = (lab: Lab) => async () => {
      await lab.arm('payments', { declineBeforeSideEffect: 1 });
      const order = newOrder('declined');
      const key = randomUUID();
      const first = await checkout(lab, order, key);
      const again = await checkout(lab, order, key);
      return {
        orderId: order.orderId,
        outcome: `first press ${first.status} (declined); pressed again with the same key: ${again.status}${again.replayed ? ', replayed' : ''}`,
        details: { first: first.status, again: again.status, replayed: again.replayed },
      };
    };
    return [
      await runVariant(
        context,
        'naive: the 503 is stored like any answer',
        0,
        { env: { KEY_POLICY: 'propagated', LAB_NAIVE: 'cache-failures' } },
        (lab) => transient(lab)(),
      ),
      await runVariant(context, 'ours: a 503 releases the key', 1, { env: { KEY_POLICY: 'propagated' } }, (lab) => transient(lab)()),
      await runVariant(context, 'naive: the decline is not stored (no key)', 1, { env: { KEY_POLICY: 'none' } }, (lab) => declined(lab)()),
      await runVariant(context, 'ours: the decline is final, stored and replayed', 0, { env: { KEY_POLICY: 'propagated' } }, (lab) =>
        declined(lab)(),
      ),
    ];
  },
});
