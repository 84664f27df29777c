import { randomUUID } from 'node:crypto';
import type { Lab } from '../lab-processes';
import type { Scenario, ScenarioContext, VariantRun } from '../scenario';
import { failureScenario } from './failure-scenario';
import { brokerMissing, deliveriesOf, drawDeliveries, onOwnQueue, queueEnv } from './queue-support';
import { checkout, codeRef, ledgerOf, needsRedis, newOrder, paymentsCrashed, runVariant, until } from './support';

/**
 * Payments' lease: the redelivery waits this long, at most, for the dead
 * consumer's claim to free itself (the default 10 s would only make the run longer).
 */
const LEASE_MS = 2000;
/** Bound on the injected crash being seen, and on the redelivery being settled. */
const CRASH_BOUND_MS = 10_000;
const REDELIVERY_BOUND_MS = 15_000;

/**
 * Orders queues the charge on RabbitMQ; payments takes the message, writes
 * the charge, and is killed (SIGKILL) before it acks. The broker hands the
 * message to the restarted payments: a redelivery, with the same body and
 * the same headers.
 */
export const queueRedelivery: Scenario = failureScenario({
  id: 'queue-redelivery',
  title: 'A message redelivered by a queue: payments is killed before it acks',
  broke:
    'A queue delivers at least once: payments took the charge message, wrote the charge and was killed before acking, so RabbitMQ delivered the same message again to the restarted consumer. Without a key, the redelivery is just another charge request, and a plain ledger charges it a second time.',
  fix: "Orders puts the caller's key in the message's `idempotency-key` header, and payments consumes it with `@Idempotent` and manual acks: a message is acked only after its charge is written and its record completed. Killed before that, the record is still in progress: the redelivery takes it over once the dead consumer's lease has run out (waiting for that if need be), and the ledger, keyed by the record, hands back the charge already written instead of writing another. Killed after completing but before acking, the redelivery is replayed from the store. Either way it is then acked",
  code: [
    codeRef('apps/payments/src/queue/message-ack.interceptor.ts', "settlement: 'ack' });"),
    codeRef('lab/src/ledgers/redis-ledger.ts', 'if existing then return existing end'),
  ].join(', '),
  unavailable: (context) => needsRedis(context, 'the record and the ledger must outlive the killed payments process') ?? brokerMissing(),
  async variants(context) {
    const naive = await onOwnQueue(
      (queue) => redeliveryVariant(context, queue, 'naive: no key, plain ledger', 2, { KEY_POLICY: 'none', LAB_NAIVE: 'plain-ledger' }),
      context,
    );
    const ours = await onOwnQueue(
      (queue) =>
        redeliveryVariant(context, queue, 'ours: key in the message headers, ack after completion', 1, { KEY_POLICY: 'propagated' }),
      context,
    );
    return [naive, ours];
  },
});

async function redeliveryVariant(
  context: ScenarioContext,
  queue: string,
  variant: string,
  expectedCharges: number,
  env: Record<string, string>,
): Promise<VariantRun> {
  const keyed = env.KEY_POLICY === 'propagated';
  return runVariant(
    context,
    variant,
    expectedCharges,
    { env: { ...env, ...queueEnv(queue) }, perService: { payments: { IDEMPOTENCY_LEASE_MS: String(LEASE_MS) } } },
    async (lab: Lab) => {
      await lab.arm('payments', { crashAfterSideEffect: 1 });
      const order = newOrder('queue-redelivery');
      const answer = await checkout(lab, order, keyed ? randomUUID() : undefined);

      // Payments takes the message, charges, and dies before acking.
      await paymentsCrashed(lab, CRASH_BOUND_MS, 'take the message');
      const killedAt = Date.now();
      // A supervisor brings it back; the broker redelivers the unacked message to it.
      await lab.restart('payments');
      // Settled for good: acked (or dead-lettered), not handed back for another try.
      const redelivery = await until(
        () => deliveriesOf(lab).find((d) => d.redelivered && (d.settlement === 'ack' || d.settlement === 'dead-letter')),
        REDELIVERY_BOUND_MS,
      );
      if (!redelivery) throw new Error(`the redelivered message was not settled within ${REDELIVERY_BOUND_MS} ms`);

      const ledger = await ledgerOf(lab, order.orderId);
      // The killed process may take its last log lines with it (they are written asynchronously):
      // then the first delivery is known from the charge it wrote.
      const logged = deliveriesOf(lab);
      const firstLogged = logged.some((d) => !d.redelivered);
      const deliveries =
        firstLogged || !ledger[0]
          ? logged
          : [{ receivedAt: Date.parse(ledger[0].at), redelivered: false, keyHash: redelivery.keyHash }, ...logged];
      drawDeliveries(lab, deliveries, killedAt);
      // The restarted consumer may take the redelivery before it answers HTTP: count by the lines' times.
      const chargesAfterCrash = ledger.filter((line) => Date.parse(line.at) <= killedAt).length;
      const sameCharge = ledger.length === 1 && (redelivery.epoch ?? 0) > (ledger[0]?.epoch ?? 0);
      const handled = sameCharge
        ? `took over the record the dead consumer had left in progress (once its lease ran out), re-executed under a newer epoch (+${(redelivery.epoch ?? 0) - (ledger[0]?.epoch ?? 0)} on the first execution's), and the ledger answered with the charge the first execution wrote: not charged again`
        : redelivery.decision === 'replayed'
          ? 'answered from the store: not charged again'
          : `charged again (${ledger.length} lines)`;
      return {
        orderId: order.orderId,
        outcome:
          `checkout ${answer.status ?? answer.error} (${answer.status === 201 ? 'charge queued' : 'no answer'}); payments charged and was killed before acking ` +
          `(${chargesAfterCrash} charge in the ledger when it died); the broker redelivered the message to the restarted payments, which ${handled}; ` +
          `the redelivery was ${redelivery.settlement === 'ack' ? 'acked' : redelivery.settlement}`,
        details: {
          checkoutStatus: answer.status ?? answer.error,
          chargesAfterCrash,
          deliveries: deliveries.map(({ redelivered, settlement, decision, epoch }) => ({
            redelivered,
            settlement: settlement ?? 'killed before ack',
            decision,
            epoch,
          })),
          redeliverySettlement: redelivery.settlement,
          redeliveryDecision: redelivery.decision,
          answeredWithFirstCharge: sameCharge,
          firstDeliveryLogged: firstLogged,
          leaseMs: LEASE_MS,
          redeliveryArrivedMsAfterKill: redelivery.receivedAt - killedAt,
          redeliverySettledMsAfterArrival: (redelivery.settledAt ?? redelivery.receivedAt) - redelivery.receivedAt,
        },
      };
    },
  );
}
