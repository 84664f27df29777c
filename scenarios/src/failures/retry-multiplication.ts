import { randomUUID } from 'node:crypto';
import type { Lab } from '../lab-processes';
import type { Scenario } from '../scenario';
import { failureScenario } from './failure-scenario';
import { checkout, newOrder, runVariant } from './support';

const ATTEMPTS = 3;

/**
 * Every hop retries, and every payments reply is lost: without a key the
 * charges are the product of the attempts per hop.
 */
export const retryMultiplication: Scenario = failureScenario({
  id: 'retry-multiplication',
  title: `Retry multiplication: ${ATTEMPTS} attempts per hop, every payments reply lost`,
  broke: `Each hop's retries multiply the next hop's: gateway ${ATTEMPTS} x orders ${ATTEMPTS} attempts all reach payments, and each one is a charge.`,
  fix: 'The key is minted once per intent and travels with every attempt at every hop, so payments executes once however many attempts reach it.',
  code: 'packages/http-client/src/key-policy.ts: `resolveIntentKey` runs once per call, before the retry loop',
  async variants(context) {
    const env = { DOWNSTREAM_ATTEMPTS: String(ATTEMPTS) };
    const perService = { gateway: { DOWNSTREAM_TIMEOUT_MS: '8000' }, orders: { DOWNSTREAM_TIMEOUT_MS: '1000' } };
    const drive = (key?: string) => async (lab: Lab) => {
      await lab.arm('payments', { loseReplies: 1000 });
      const order = newOrder('multiplication');
      const answer = await checkout(lab, order, key);
      return { orderId: order.orderId, outcome: `the caller got ${answer.status ?? answer.error}`, details: { status: answer.status } };
    };
    const naive = await runVariant(
      context,
      `naive: no key (${ATTEMPTS} x ${ATTEMPTS})`,
      ATTEMPTS * ATTEMPTS,
      { env: { ...env, KEY_POLICY: 'none' }, perService },
      drive(),
    );
    const ours = await runVariant(
      context,
      'ours: propagated key',
      1,
      { env: { ...env, KEY_POLICY: 'propagated' }, perService },
      drive(randomUUID()),
    );
    return [naive, ours];
  },
});
