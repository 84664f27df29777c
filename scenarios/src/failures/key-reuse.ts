import { randomUUID } from 'node:crypto';
import type { Lab } from '../lab-processes';
import type { Scenario } from '../scenario';
import { failureScenario } from './failure-scenario';
import { checkout, newOrder, runVariant } from './support';

/**
 * A key reused with another amount: a client bug, or a user editing the
 * basket and resubmitting with the old key. It must be refused where it is
 * first seen, and nothing may be charged or cached for it.
 */
export const keyReuse: Scenario = failureScenario({
  id: 'key-reuse',
  title: 'Key reused with another amount',
  broke: 'Without a key (or without a fingerprint check) a changed request under an old key is just another payment.',
  fix: 'Every record keeps the fingerprint of its request; the same key with another fingerprint is answered 422 by the first hop that sees it, before any claim, and the refusal is not stored.',
  code: 'packages/idempotency/src/coordinator.ts: `claim.fingerprint !== request.fingerprint` -> KeyReusedError',
  async variants(context) {
    const drive = (key: () => string | undefined) => async (lab: Lab) => {
      const order = newOrder('key-reuse', 500);
      const k = key();
      const first = await checkout(lab, order, k);
      const changed = await checkout(lab, { ...order, amountCents: 900 }, k);
      const again = await checkout(lab, { ...order, amountCents: 900 }, k);
      return {
        orderId: order.orderId,
        outcome: `500 -> ${first.status}; same key, 900 -> ${changed.status}; again -> ${again.status}`,
        details: { first: first.status, changed: changed.status, again: again.status },
      };
    };
    const naive = await runVariant(
      context,
      'naive: no key',
      3,
      { env: { KEY_POLICY: 'none' } },
      drive(() => undefined),
    );
    const ours = await runVariant(
      context,
      'ours: propagated key',
      1,
      { env: { KEY_POLICY: 'propagated' } },
      drive(() => randomUUID()),
    );
    // Where the reuse was refused, from the services' own decisions.
    const refusedBy = [...new Set(ours.events.filter((e) => e.outcome === 'mismatched').map((e) => e.service))];
    ours.details.refusedBy = refusedBy;
    ours.outcome += ` (refused by: ${refusedBy.join(', ') || 'nobody'})`;
    return [naive, ours];
  },
});
