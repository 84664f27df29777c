import { IdempotentHttpClient } from '@idempotency-chain/http-client';
import { randomUUID } from 'node:crypto';
import type { Lab } from '../lab-processes';
import type { Scenario } from '../scenario';
import { failureScenario } from './failure-scenario';
import { checkout, newOrder, runVariant, statusCounts, type Answer } from './support';

const CLICKS = 50;
/** Long budgets: here only the duplicates matter, not timeouts. */
const PATIENT = { DOWNSTREAM_TIMEOUT_MS: '5000' };

/**
 * 50 concurrent checkouts of one order while payments is slow: a double
 * click, a retrying proxy, an impatient app. Payments answers a first attempt
 * after 1 s, so every duplicate arrives while the first is still running.
 */
export const doubleClick: Scenario = failureScenario({
  id: 'double-click',
  title: `Double-click: ${CLICKS} concurrent checkouts of one order`,
  broke: 'Without a key every concurrent duplicate is a separate payment: the user is charged once per click.',
  fix: 'The first request claims the key atomically before charging; every duplicate finds it in progress and waits for its outcome (or is told 409 with Retry-After under IN_FLIGHT=reject, and its retry is answered from the store).',
  code: 'packages/idempotency/src/coordinator.ts: the in_progress branch of `run` (wait for the shared outcome, or InFlightError)',
  async variants(context) {
    const slow = async (lab: Lab) => lab.arm('payments', { slowFirstAttemptMs: 1000 });
    const naive = await runVariant(context, 'naive: no key', CLICKS, { env: { KEY_POLICY: 'none', ...PATIENT } }, async (lab) => {
      await slow(lab);
      const order = newOrder('double-click');
      const answers = await Promise.all(Array.from({ length: CLICKS }, () => checkout(lab, order)));
      return {
        orderId: order.orderId,
        outcome: `${describe(answers)}: every click is a new payment`,
        details: { statuses: statusCounts(answers) },
      };
    });
    const wait = await runVariant(
      context,
      'ours: one key, duplicates wait',
      1,
      { env: { KEY_POLICY: 'propagated', ...PATIENT } },
      async (lab) => {
        await slow(lab);
        const order = newOrder('double-click');
        const key = randomUUID();
        const answers = await Promise.all(Array.from({ length: CLICKS }, () => checkout(lab, order, key)));
        const bodies = new Set(answers.map((a) => a.body)).size;
        return {
          orderId: order.orderId,
          outcome: `${describe(answers)}, ${bodies} distinct bod${bodies === 1 ? 'y' : 'ies'}: the duplicates waited for the first and got its answer`,
          details: { statuses: statusCounts(answers), distinctBodies: bodies, replayed: answers.filter((a) => a.replayed).length },
        };
      },
    );
    const reject = await runVariant(
      context,
      'ours: one key, IN_FLIGHT=reject',
      1,
      { env: { KEY_POLICY: 'propagated', IN_FLIGHT: 'reject', IDEMPOTENCY_LEASE_MS: '2000', ...PATIENT } },
      async (lab) => {
        await slow(lab);
        const order = newOrder('double-click');
        const key = randomUUID();
        const first = await Promise.all(Array.from({ length: CLICKS }, () => checkout(lab, order, key)));
        // Each rejected click retries once, honouring Retry-After, as the http-client does.
        const client = new IdempotentHttpClient({
          baseUrl: lab.url('gateway'),
          headers: { authorization: lab.authorization(order.account) },
          maxAttempts: 4,
          attemptTimeoutMs: 5000,
          deadlineMs: 15_000,
        });
        const retried = await Promise.all(
          first.map(async (answer) => (answer.status === 409 ? client.post<unknown>('/checkout', order, { key }) : undefined)),
        );
        await client.close();
        const finals = retried.map((r, i) => (r ? { status: r.status, body: JSON.stringify(r.body), replayed: r.replayed } : first[i]!));
        const bodies = new Set(finals.map((a) => (a.status === 201 ? JSON.stringify(JSON.parse(a.body)) : a.body))).size;
        const retryAfter = first.find((a) => a.status === 409)?.retryAfter;
        return {
          orderId: order.orderId,
          outcome: `first answers ${describe(first)} (409s with Retry-After: ${retryAfter}); after one retry each: ${describe(finals as Answer[])}, ${bodies} distinct bod${bodies === 1 ? 'y' : 'ies'}`,
          details: { first: statusCounts(first), final: statusCounts(finals as Answer[]), retryAfter, distinctBodies: bodies },
        };
      },
    );
    return [naive, wait, reject];
  },
});

function describe(answers: Answer[]): string {
  return Object.entries(statusCounts(answers))
    .map(([status, count]) => `${count} x ${status}`)
    .join(', ');
}
