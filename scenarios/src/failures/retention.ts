import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Lab } from '../lab-processes';
import type { Scenario } from '../scenario';
import { failureScenario } from './failure-scenario';
import { checkout, newOrder, runVariant } from './support';

const SHORT_RETENTION_MS = 1000;

/**
 * A retry that arrives after the key expired executes again: expiry is
 * documented behaviour, so retention must outlive the retry window.
 */
export const retention: Scenario = failureScenario({
  id: 'retention',
  title: 'Retention shorter than the retry window',
  broke: 'Once a completed key has expired, the same key is a new request: a retry after retention charges again.',
  fix: 'Retention is per operation and chosen from the retry policy: longer than every layer\'s attempts x (timeout + largest backoff) plus the user\'s own retries (docs/semantics.md, "Choosing retention").',
  code: 'packages/idempotency/src/policy.ts: `retentionMs` (default 24 h)',
  async variants(context) {
    const pressTwice = async (lab: Lab) => {
      const order = newOrder('retention');
      const key = randomUUID();
      const first = await checkout(lab, order, key);
      await sleep(SHORT_RETENTION_MS * 2);
      const later = await checkout(lab, order, key);
      return {
        orderId: order.orderId,
        outcome: `${first.status}, then ${SHORT_RETENTION_MS * 2} ms later with the same key: ${later.status}${later.replayed ? ' replayed' : ' executed again'}`,
        details: { first: first.status, later: later.status, replayed: later.replayed, gapMs: SHORT_RETENTION_MS * 2 },
      };
    };
    const short = await runVariant(
      context,
      `naive: retention ${SHORT_RETENTION_MS} ms, retry after ${SHORT_RETENTION_MS * 2} ms`,
      2,
      { env: { KEY_POLICY: 'propagated', IDEMPOTENCY_RETENTION_MS: String(SHORT_RETENTION_MS) } },
      pressTwice,
    );
    const long = await runVariant(context, 'ours: retention 24 h', 1, { env: { KEY_POLICY: 'propagated' } }, pressTwice);
    return [short, long];
  },
});
