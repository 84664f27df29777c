import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { SERVICES, type Lab } from '../lab-processes';
import type { Scenario, ScenarioContext, VariantRun } from '../scenario';
import { failureScenario } from './failure-scenario';
import { SETUP } from '../write-up';
import { PrivateRedis, privateRedisUnavailable } from '@idempotency-chain/local-processes';
import { checkout, codeRef, counter, ledgerOf, needsRedis, newOrder, runVariant, until } from './support';

/** Bound on the services noticing that their store went away, or came back. */
const HEALTH_BOUND_MS = 15_000;

/**
 * The idempotency store (a Redis of the scenario's own) is killed during the
 * checkout; the ledger stays on the run's Redis, so the charges survive and
 * can be counted. Failing closed answers 503 and runs nothing; failing open
 * runs every hop unprotected, and the write-up's faults multiply the charges
 * exactly as if there were no key at all.
 */
export const storeOutage: Scenario = failureScenario({
  id: 'store-outage',
  title: 'Store outage: the idempotency Redis goes down during the checkout',
  broke:
    'A service that runs unprotected when its store is down (fail open) lets every retry through: the same faults as the write-up charge 4 times for one press, key or not, and only the metrics show it.',
  fix: 'Fail closed by default: the claim fails, the request is answered 503 (problem+json) before anything runs, nothing is charged; the caller retries with the same key once the store is back and is charged once. Failing open is an opt-in per operation, and counted.',
  code: codeRef('packages/idempotency/src/coordinator.ts', "if (policy.onStoreFailure !== 'fail-open') {"),
  unavailable: (context) =>
    needsRedis(context, "the ledger must stay up on the run's Redis while the store's Redis is down") ?? privateRedisUnavailable(),
  async variants(context) {
    const naive = await withPrivateRedis((redis) => failOpen(context, redis));
    const ours = await withPrivateRedis((redis) => failClosed(context, redis));
    return [naive, ours];
  },
});

async function withPrivateRedis<T>(body: (redis: PrivateRedis) => Promise<T>): Promise<T> {
  const redis = await PrivateRedis.start();
  try {
    return await body(redis);
  } finally {
    await redis.stop();
  }
}

/** The services keep their records in the private Redis; the ledger stays on the run's. */
function storeEnv(context: ScenarioContext, redis: PrivateRedis): Record<string, string> {
  return { KEY_POLICY: 'propagated', IDEMPOTENCY_STORE: 'redis', REDIS_URL: redis.url, LEDGER_REDIS_URL: context.redisUrl! };
}

/** True when `name`'s /health says its store answers. */
async function storeUp(lab: Lab, name: string): Promise<boolean> {
  try {
    const response = await fetch(`${lab.url(name)}/health`, { signal: AbortSignal.timeout(3000) });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

/** Wait until every service's /health reports the store `up` (or down); the time it took. */
export async function allStores(lab: Lab, up: boolean): Promise<number> {
  const from = Date.now();
  const reached = await until(
    async () => (await Promise.all(SERVICES.map((service) => storeUp(lab, service)))).every((ok) => ok === up),
    HEALTH_BOUND_MS,
    100,
  );
  if (!reached) throw new Error(`the services' /health did not report the store ${up ? 'up' : 'down'} within ${HEALTH_BOUND_MS} ms`);
  return Date.now() - from;
}

async function failClosed(context: ScenarioContext, redis: PrivateRedis): Promise<VariantRun> {
  return runVariant(context, 'ours: fail closed (the default)', 1, { env: storeEnv(context, redis) }, async (lab) => {
    const order = newOrder('store-outage');
    const key = randomUUID();

    await redis.stop();
    await allStores(lab, false);
    const first = await checkout(lab, order, key);
    const chargesAfterOutage = (await ledgerOf(lab, order.orderId)).length;
    const problem = parseProblem(first.body);

    await redis.start();
    const recoveredInMs = await allStores(lab, true);
    const retry = await checkout(lab, order, key);
    return {
      orderId: order.orderId,
      outcome:
        `store down: ${first.status ?? first.error}${problem.type ? ` (${problem.type})` : ''}, ${chargesAfterOutage} charges; ` +
        `store back (health up after ${recoveredInMs} ms): the retry with the same key got ${retry.status ?? retry.error}`,
      details: {
        firstStatus: first.status ?? first.error,
        problemType: problem.type,
        chargesAfterOutage,
        storeRecoveredInMs: recoveredInMs,
        retryStatus: retry.status ?? retry.error,
      },
    };
  });
}

async function failOpen(context: ScenarioContext, redis: PrivateRedis): Promise<VariantRun> {
  return runVariant(
    context,
    'naive: fail open (IDEMPOTENCY_ON_STORE_FAILURE=fail-open)',
    4,
    { env: { ...storeEnv(context, redis), IDEMPOTENCY_ON_STORE_FAILURE: 'fail-open' } },
    async (lab) => {
      await redis.stop();
      await allStores(lab, false);
      // The write-up's faults: a slow first charge, a lost reply from orders, the default timeouts.
      await lab.arm('payments', { slowFirstAttemptMs: SETUP.slowFirstAttemptMs });
      await lab.arm('orders', { loseReplies: SETUP.ordersLostReplies });
      const order = newOrder('store-outage');
      const answer = await checkout(lab, order, randomUUID(), SETUP.callerBudgetMs + 2000);
      // Settled: every slow first attempt began before the caller's answer, and has ended (into the void) by now.
      await sleep(SETUP.slowFirstAttemptMs + 500);
      const perService: Record<string, number> = {};
      let storeErrors = 0;
      for (const service of SERVICES) {
        const metrics = await lab.metrics(service);
        perService[service] = counter(metrics, 'idempotency_events_total', { outcome: 'fail_open' });
        storeErrors += counter(metrics, 'idempotency_events_total', { outcome: 'store_error' });
      }
      const failOpen = Object.values(perService).reduce((a, b) => a + b, 0);
      return {
        orderId: order.orderId,
        outcome: `caller got ${answer.status ?? answer.error} with a key, but every hop ran unprotected: ${failOpen} requests counted as fail_open (${SERVICES.map((s) => `${s} ${perService[s]}`).join(', ')})`,
        details: { status: answer.status ?? answer.error, failOpen, failOpenPerService: perService, storeErrors },
      };
    },
  );
}

function parseProblem(body: string): { type?: string } {
  try {
    const problem = JSON.parse(body) as { type?: string };
    return { type: problem.type };
  } catch {
    return {};
  }
}
