import { randomUUID } from 'node:crypto';
import type { Lab } from '../lab-processes';
import { freePorts } from '@idempotency-chain/local-processes';
import type { Scenario, ScenarioContext, VariantRun } from '../scenario';
import { failureScenario } from './failure-scenario';
import { RoundRobinProxy } from './round-robin-proxy';
import { checkout, codeRef, ledgerOf, needsRedis, newOrder, runVariant } from './support';

const REPLICA = 'payments-b';

/**
 * Two payments processes behind a round-robin balancer. The first replica
 * charges and loses its reply; orders retries with the same key, and the
 * balancer sends the retry to the other replica. With a store in each
 * process, the other replica has never seen the key and charges again; with
 * one Redis shared by both, it finds the completed record and replays it.
 */
export const replicas: Scenario = failureScenario({
  id: 'replicas',
  title: 'Replicas behind a balancer: the retry lands on the other payments process',
  broke:
    'Each replica keeps its own in-memory store: the retry that the balancer routes to the other replica finds no record of the key and charges again.',
  fix: 'Every replica claims and completes keys in one shared Redis store: the other replica finds the record completed and replays the first charge.',
  code: codeRef('packages/idempotency/src/redis/scripts.ts', "if record[1] == 'completed' then"),
  unavailable: (context) => needsRedis(context, 'the protected variant shares one store between the replicas'),
  async variants(context) {
    const naive = await replicaVariant(context, 'naive: an in-memory store in each replica', 2, 'memory');
    const ours = await replicaVariant(context, 'ours: one Redis store shared by both replicas', 1, 'redis');
    return [naive, ours];
  },
});

async function replicaVariant(
  context: ScenarioContext,
  variant: string,
  expectedCharges: number,
  store: 'memory' | 'redis',
): Promise<VariantRun> {
  // The proxy needs payments' address before the lab starts: every port is picked up front.
  const [gateway, orders, payments, replicaPort, proxyPort] = (await freePorts(5)) as [number, number, number, number, number];
  const ports = { gateway, orders, payments };
  const proxy = await RoundRobinProxy.start(proxyPort, [`http://127.0.0.1:${ports.payments}`, `http://127.0.0.1:${replicaPort}`]);
  try {
    return await runVariant(
      context,
      variant,
      expectedCharges,
      {
        ports,
        env: { KEY_POLICY: 'propagated', IDEMPOTENCY_STORE: store },
        perService: {
          // Patient outer hops: only orders retries, and its retry is the one the balancer moves.
          gateway: { DOWNSTREAM_TIMEOUT_MS: '5000', DOWNSTREAM_ATTEMPTS: '1' },
          orders: { PAYMENTS_URL: proxy.url, DOWNSTREAM_TIMEOUT_MS: '3000' },
        },
      },
      async (lab: Lab) => {
        await lab.startReplica(REPLICA, 'payments', replicaPort);
        // The first replica charges, then its reply is lost: orders sees a reset and retries.
        await lab.arm('payments', { loseReplies: 1 });
        const order = newOrder('replicas');
        const answer = await checkout(lab, order, randomUUID());
        const perReplica = {
          payments: (await ledgerOf(lab, order.orderId, ['payments'])).length,
          [REPLICA]: (await ledgerOf(lab, order.orderId, [REPLICA])).length,
        };
        const routed = proxy.requests.map((r) => `${r.target === proxy.targets[0] ? 'payments' : REPLICA}:${r.status ?? 'reset'}`);
        const retry = lab.events.find((e) => e.event === 'attempt' && e.service === 'orders' && e.attempt === 2);
        const sharedLedger = store === 'redis';
        return {
          orderId: order.orderId,
          ledgers: ['payments', REPLICA],
          outcome:
            `caller got ${answer.status ?? answer.error}; the balancer sent orders' attempts to ${routed.join(', ')}; ` +
            (retry?.replayed
              ? `${REPLICA} replayed the charge from the shared store`
              : `${REPLICA} had no record of the key and charged again`) +
            (sharedLedger ? '' : ` (ledger lines: payments ${perReplica.payments}, ${REPLICA} ${perReplica[REPLICA]})`),
          details: {
            status: answer.status ?? answer.error,
            routed,
            retryReplayed: Boolean(retry?.replayed),
            ledgerLinesPerReplica: sharedLedger ? 'one shared Redis ledger' : perReplica,
          },
        };
      },
    );
  } finally {
    await proxy.close();
  }
}
