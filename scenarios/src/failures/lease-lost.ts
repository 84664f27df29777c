import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Lab } from '../lab-processes';
import type { Scenario, ScenarioContext, VariantRun } from '../scenario';
import { failureScenario } from './failure-scenario';
import { checkout, codeRef, counter, needsRedis, newOrder, runVariant, until } from './support';

/** Payments' lease, and how long its first attempt stalls before charging: well past the lease. */
const LEASE_MS = 1000;
const STALL_MS = 2500;
/** Orders gives up on the stalled attempt after the lease has run out, and retries once. */
const ORDERS_TIMEOUT_MS = 1200;
/** Bound on waiting for every execution at payments to end. */
const SETTLE_BOUND_MS = 10_000;

/** What ends an execution at payments, as its coordinator logs it (with the execution's epoch). */
const TERMINAL = new Set(['executed', 'stale_completion_refused', 'released', 'lease_lost']);

/**
 * Payments' first attempt claims the key and stalls before charging, longer
 * than its lease. Orders times out and retries with the same key. Without a
 * heartbeat the lease runs out, the retry claims the key (a newer epoch) and
 * charges; the stalled holder then wakes up and charges too. A heartbeat keeps
 * a live holder's lease; a fenced ledger refuses the holder's late write.
 */
export const leaseLost: Scenario = failureScenario({
  id: 'lease-lost',
  title: 'Lease lost: a holder stalls past its lease while a retry claims the key',
  broke:
    'A holder stalled past its lease (GC pause, slow dependency) loses the key to the retry, which charges; the holder wakes up and charges as well: two executions of one key.',
  fix: 'A heartbeat renews the lease while the holder is alive, so the retry waits for it; and if the lease is lost anyway, the ledger refuses a write whose fencing epoch is older than one it has seen.',
  code: `${codeRef('packages/idempotency/src/coordinator.ts', '.renew(this.storeKey, this.owner, this.policy.leaseMs)')} (heartbeat); ${codeRef(
    'lab/src/ledgers/redis-ledger.ts',
    'if seen > tonumber(ARGV[1]) then return 0 end',
  )} (fence)`,
  unavailable: (context) => needsRedis(context, 'leases, epochs and the fenced ledger live in Redis'),
  async variants(context) {
    const naive = await leaseVariant(context, 'naive: no heartbeat, plain ledger', 2, 'no-heartbeat,plain-ledger', 2);
    const heartbeat = await leaseVariant(context, 'ours: heartbeat renews the lease', 1, undefined, 1);
    const fenced = await leaseVariant(context, 'ours: heartbeat off, fenced ledger', 1, 'no-heartbeat', 2);
    return [naive, heartbeat, fenced];
  },
});

async function leaseVariant(
  context: ScenarioContext,
  variant: string,
  expectedCharges: number,
  naive: string | undefined,
  /** Executions payments runs for the key: the holder, plus the retry when the lease is lost. */
  executions: number,
): Promise<VariantRun> {
  return runVariant(
    context,
    variant,
    expectedCharges,
    {
      env: { KEY_POLICY: 'propagated' },
      perService: {
        gateway: { DOWNSTREAM_TIMEOUT_MS: '8000' },
        orders: { DOWNSTREAM_TIMEOUT_MS: String(ORDERS_TIMEOUT_MS), DOWNSTREAM_ATTEMPTS: '2' },
        payments: { IDEMPOTENCY_LEASE_MS: String(LEASE_MS), ...(naive ? { LAB_NAIVE: naive } : {}) },
      },
    },
    async (lab: Lab) => {
      await lab.arm('payments', { stallBeforeSideEffectMs: STALL_MS });
      const order = newOrder('lease-lost');
      const started = Date.now();
      const answer = await checkout(lab, order, randomUUID());

      // Count only once the stalled holder has ended too: its late write is the point.
      const ended = () =>
        new Set(
          lab.events
            .filter((e) => e.service === 'payments' && e.event === 'idempotency' && e.epoch && TERMINAL.has(e.outcome ?? ''))
            .map((e) => e.epoch),
        ).size;
      await sleep(Math.max(0, started + STALL_MS + 500 - Date.now()));
      const settled = await until<boolean>(() => ended() >= executions, started + SETTLE_BOUND_MS - Date.now());

      const metrics = await lab.metrics('payments');
      const staleWritesRefused = counter(metrics, 'ledger_stale_writes_refused_total');
      const decisions = (outcome: string) => counter(metrics, 'idempotency_events_total', { outcome });
      const epochs = ended();
      return {
        orderId: order.orderId,
        outcome:
          `caller got ${answer.status ?? answer.error} in ${answer.ms} ms; payments ran ${epochs} execution${epochs === 1 ? '' : 's'} of the key` +
          (epochs > 1 ? ' (the stalled holder and the retry that took its lease over)' : ' (the retry waited for the live holder)') +
          (staleWritesRefused > 0
            ? `; the ledger refused the holder's stale write (ledger_stale_writes_refused_total = ${staleWritesRefused})`
            : ''),
        details: {
          status: answer.status ?? answer.error,
          callerMs: answer.ms,
          executions: epochs,
          settled,
          staleWritesRefused,
          leaseLost: decisions('lease_lost'),
          staleCompletionRefused: decisions('stale_completion_refused'),
          waited: decisions('waited'),
        },
      };
    },
  );
}
