import { randomUUID } from 'node:crypto';
import type { Lab } from '../lab-processes';
import type { Scenario, ScenarioContext, VariantRun } from '../scenario';
import { failureScenario } from './failure-scenario';
import { brokerMissing, deliveriesOf, drawDeliveries, onOwnQueue, queueEnv } from './queue-support';
import { checkout, codeRef, ledgerOf, newOrder, runVariant, until } from './support';

/** Bound on both messages being settled by payments. */
const SETTLE_BOUND_MS = 10_000;

/**
 * The counter-case of the write-up: the user adds one item, then, on
 * purpose, adds one more. Two intents, two "add one item" charges with
 * identical bodies, queued one after the other. Keyed on the body, the
 * second is taken for a redelivery of the first.
 */
export const fingerprintMerge: Scenario = failureScenario({
  id: 'fingerprint-merge',
  title: 'Two separate "add one item" messages with identical bodies: merged by the fingerprint',
  broke:
    'A fingerprint cannot tell a redelivery from a second intent with the same content: when the producers send no key and the consumer keys each message on SHA-256 of its pattern and body, the second "add one item" is answered from the first one\'s record and the user gets one item for two presses. It is the right answer for a retry and the wrong one here, and nothing in the message can tell the two apart.',
  fix: "The key belongs to the intent: each press carries its own `Idempotency-Key`, orders passes it on in the message's `idempotency-key` header (derived from its record of the press, so one per press), and payments keys on it; the fingerprint is only the fallback for a message that carries no key, never the default",
  code: [
    codeRef('packages/idempotency/src/nest/idempotency.runner.ts', 'key: key ?? fingerprint'),
    codeRef('apps/orders/src/charge-publisher.ts', 'headers: { [HeaderName.IdempotencyKey]'),
  ].join(', '),
  unavailable: () => brokerMissing(),
  async variants(context) {
    const naive = await onOwnQueue(
      (queue) =>
        mergeVariant(context, queue, 'naive: fingerprint as the default (producers send no key)', 1, {
          env: { KEY_POLICY: 'none' },
          perService: { payments: { KEY_POLICY: 'fingerprint' } },
        }),
      context,
    );
    const ours = await onOwnQueue(
      (queue) => mergeVariant(context, queue, 'ours: a key per intent, in the message headers', 2, { env: { KEY_POLICY: 'propagated' } }),
      context,
    );
    return [naive, ours];
  },
});

async function mergeVariant(
  context: ScenarioContext,
  queue: string,
  variant: string,
  expectedCharges: number,
  settings: { env: Record<string, string>; perService?: { payments: Record<string, string> } },
): Promise<VariantRun> {
  return runVariant(
    context,
    variant,
    expectedCharges,
    { env: { ...settings.env, ...queueEnv(queue) }, perService: settings.perService },
    async (lab: Lab) => {
      // One order, two presses of "add one item": the same body, two intents, each with its own key.
      const order = newOrder('fingerprint-merge');
      const first = await checkout(lab, order, randomUUID());
      const second = await checkout(lab, order, randomUUID());
      const settled = await until(() => {
        const deliveries = deliveriesOf(lab).filter((d) => d.settlement !== undefined);
        return deliveries.length >= 2 ? deliveries : undefined;
      }, SETTLE_BOUND_MS);
      if (!settled) throw new Error(`payments did not settle both messages within ${SETTLE_BOUND_MS} ms`);
      drawDeliveries(lab, settled);
      const ledger = await ledgerOf(lab, order.orderId);
      const [a, b] = settled;
      const keys = new Set(settled.map((d) => d.keyHash ?? 'none')).size;
      const merged = b?.decision === 'replayed' || b?.decision === 'waited';
      return {
        orderId: order.orderId,
        outcome:
          `two presses answered ${first.status ?? first.error} and ${second.status ?? second.error}; payments got two messages ` +
          `(${keys === 2 ? 'two distinct keys' : 'no key: keyed on the fingerprint of the body'}): the first ${a?.decision ?? 'charged'}, ` +
          (merged
            ? `the second was ${b?.decision} from the first one's record: merged, ${ledger.length} charge for two intents (the fallback's flaw, shown)`
            : `the second ${b?.decision ?? 'charged'} too: ${ledger.length} charges for two intents`),
        details: {
          statuses: [first.status ?? first.error, second.status ?? second.error],
          distinctKeysAtPayments: settled.every((d) => d.keyHash) ? keys : 0,
          decisions: settled.map((d) => d.decision ?? 'unprotected'),
          settlements: settled.map((d) => d.settlement),
          merged,
        },
      };
    },
  );
}
