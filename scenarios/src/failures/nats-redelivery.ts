import { randomUUID } from 'node:crypto';
import type { Lab } from '../lab-processes';
import type { Scenario, ScenarioContext, VariantRun } from '../scenario';
import { failureScenario } from './failure-scenario';
import { natsMissing, natsUrl } from './nats-support';
import { checkout, codeRef, ledgerOf, needsRedis, newOrder, paymentsCrashed, runVariant } from './support';

/** Payments' lease: the re-sent request takes over the dead holder's record once it has run out. */
const LEASE_MS = 2000;
/** Orders waits this long for payments' reply before sending the request again, up to `ATTEMPTS` times. */
const REQUEST_TIMEOUT_MS = 3000;
const ATTEMPTS = 8;
/** The caller's budget: orders' attempts and their pauses, and payments' restart, fit in it. */
const CHECKOUT_BUDGET_MS = 45_000;
/** Bound on the injected crash being seen. */
const CRASH_BOUND_MS = 10_000;

/**
 * Orders asks payments for the charge over NATS (request/reply); payments
 * writes the charge and is killed (SIGKILL) before it answers. Core NATS
 * keeps nothing: orders hears no reply within its timeout and sends the
 * request again - the redelivery - which the restarted payments takes.
 */
export const natsRedelivery: Scenario = failureScenario({
  id: 'nats-redelivery',
  title: 'A request re-sent over NATS: payments is killed before it answers',
  broke:
    'Over NATS request/reply the requester is the one that redelivers: payments took the charge request, wrote the charge and was killed before answering, so orders, hearing nothing, sent the same request again to the restarted payments. Without a key the re-send is just another charge request, and a plain ledger charges it a second time.',
  fix: "Orders puts the key the HTTP client would send in the request's `idempotency-key` header (`messageKeyHeaders`: derived from its own record, so the same on every re-send), and payments answers it with `@Idempotent`, reading the key from the NATS headers: the re-send finds the dead execution's record, takes it over once its lease has run out, and the ledger, keyed by the record, hands back the charge already written instead of writing another",
  code: [
    codeRef('packages/http-client/src/message-key.ts', 'export function messageKeyHeaders'),
    codeRef('apps/orders/src/nats-charge-requester.ts', 'for (let attempt = 1; attempt <= this.attempts; attempt++)'),
    codeRef('apps/payments/src/queue/nats/nats-charges.consumer.ts', "@Idempotent('payments.charge')"),
  ].join(', '),
  unavailable: async (context) =>
    needsRedis(context, 'the record and the ledger must outlive the killed payments process') ?? natsMissing(),
  async variants(context) {
    const naive = await resendVariant(context, 'naive: no key, plain ledger', 2, { KEY_POLICY: 'none', LAB_NAIVE: 'plain-ledger' });
    const ours = await resendVariant(context, 'ours: key in the NATS headers, same key on the re-send', 1, { KEY_POLICY: 'propagated' });
    return [naive, ours];
  },
});

async function resendVariant(
  context: ScenarioContext,
  variant: string,
  expectedCharges: number,
  env: Record<string, string>,
): Promise<VariantRun> {
  const keyed = env.KEY_POLICY === 'propagated';
  return runVariant(
    context,
    variant,
    expectedCharges,
    {
      env: { ...env, CHARGE_TRANSPORT: 'nats', NATS_URL: natsUrl() },
      perService: {
        // The gateway waits for orders' whole run of attempts: the re-sends are orders', not the caller's.
        gateway: { DOWNSTREAM_TIMEOUT_MS: String(CHECKOUT_BUDGET_MS), DOWNSTREAM_ATTEMPTS: '1' },
        orders: { DOWNSTREAM_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS), DOWNSTREAM_ATTEMPTS: String(ATTEMPTS) },
        payments: { IDEMPOTENCY_LEASE_MS: String(LEASE_MS) },
      },
    },
    async (lab: Lab) => {
      await lab.arm('payments', { crashAfterSideEffect: 1 });
      const order = newOrder('nats-redelivery');
      const answered = checkout(lab, order, keyed ? randomUUID() : undefined, CHECKOUT_BUDGET_MS);

      // Payments takes the request, charges, and dies before answering.
      await paymentsCrashed(lab, CRASH_BOUND_MS, 'take the request');
      const killedAt = Date.now();
      // A supervisor brings it back; orders' next re-send reaches it.
      await lab.restart('payments');
      const answer = await answered;

      const ledger = await ledgerOf(lab, order.orderId);
      const chargesAfterCrash = ledger.filter((line) => Date.parse(line.at) > killedAt).length;
      const resends = ordersResends(lab);
      return {
        orderId: order.orderId,
        outcome:
          `checkout ${answer.status ?? answer.error} in ${answer.ms} ms; payments charged and was killed before answering; orders sent the request ` +
          `${resends} more time${resends === 1 ? '' : 's'} (no reply within ${REQUEST_TIMEOUT_MS} ms, or no payments listening), and the restarted payments ` +
          (chargesAfterCrash === 0
            ? 'answered with the charge already written: not charged again'
            : `charged again (${ledger.length} lines)`),
        details: {
          checkoutStatus: answer.status ?? answer.error,
          checkoutMs: answer.ms,
          chargesAfterCrash,
          ordersResends: resends,
          leaseMs: LEASE_MS,
          requestTimeoutMs: REQUEST_TIMEOUT_MS,
        },
      };
    },
  );
}

/** How many of orders' charge requests went unanswered (each one sent again, the last one aside), as it logs them. */
function ordersResends(lab: Lab): number {
  return lab.events.filter((e) => e.service === 'orders' && (e as { chargeRequest?: string }).chargeRequest === 'unanswered').length;
}
