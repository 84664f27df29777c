import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Lab } from '../lab-processes';
import type { Scenario, ScenarioContext, VariantRun } from '../scenario';
import { failureScenario } from './failure-scenario';
import { checkout, codeRef, ledgerOf, needsRedis, newOrder, runVariant } from './support';

/** Payments' lease: a crashed holder frees the key this long after its last renewal. */
const LEASE_MS = 1000;
/** Wait this much past the lease before retrying, so the retry finds the key free. */
const LEASE_MARGIN_MS = 1000;
/** Bound on waiting for the injected crash to be seen. */
const CRASH_BOUND_MS = 10_000;

/**
 * Payments writes the charge, then the process is killed (SIGKILL) before it
 * can answer or complete its idempotency record. The record stays in progress
 * until its lease runs out; the caller's retry with the same key then takes
 * the key over and runs the charge again. Only the ledger can tell that this
 * record has already charged.
 */
export const crashAfterSideEffect: Scenario = failureScenario({
  id: 'crash-after-side-effect',
  title: 'Crash after the side effect: payments dies between the charge and its answer',
  broke:
    'Payments is killed after writing the charge and before completing its record: once the lease has run out the retry with the same key re-executes, and a plain ledger charges a second time.',
  fix: 'On Redis the ledger write is keyed by the idempotency record and done in one atomic step: the re-execution (a newer epoch of the same record) gets the charge that is already there instead of writing a new one. On Postgres the charge is inserted in the transaction that completes the record, so a crash before the commit leaves neither.',
  code: codeRef('lab/src/ledgers/redis-ledger.ts', 'if existing then return existing end'),
  unavailable: (context) => needsRedis(context, 'the record and the ledger must outlive the payments process'),
  async variants(context) {
    const naive = await crashVariant(context, 'naive: plain ledger (a new line per write)', 2, {}, { LAB_NAIVE: 'plain-ledger' });
    const ours = await crashVariant(context, 'ours: ledger keyed and fenced by the record', 1, {}, {});
    const variants = [naive, ours];
    // On Postgres nothing is keyed in the ledger: the charge commits with the record or not at all.
    const database = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
    if (await reachable(database)) {
      variants.push(
        await crashVariant(
          context,
          'ours: Postgres, the charge commits with the record',
          1,
          { IDEMPOTENCY_STORE: 'postgres', DATABASE_URL: database },
          {},
        ),
      );
    } else {
      context.log(`  Postgres variant not run: nothing answers at ${new URL(database).host}`);
    }
    return variants;
  },
});

async function crashVariant(
  context: ScenarioContext,
  variant: string,
  expectedCharges: number,
  env: Record<string, string>,
  paymentsEnv: Record<string, string>,
): Promise<VariantRun> {
  return runVariant(
    context,
    variant,
    expectedCharges,
    { env: { KEY_POLICY: 'propagated', ...env }, perService: { payments: { IDEMPOTENCY_LEASE_MS: String(LEASE_MS), ...paymentsEnv } } },
    async (lab: Lab) => {
      await lab.arm('payments', { crashAfterSideEffect: 1 });
      const order = newOrder('crash');
      const key = randomUUID();

      // Payments charges and dies; orders' retry finds nobody listening, and the chain answers an error.
      const first = await checkout(lab, order, key);
      const failedAt = Date.now();
      await Promise.race([
        lab.exited('payments'),
        sleep(CRASH_BOUND_MS).then(() => {
          throw new Error(`payments did not crash within ${CRASH_BOUND_MS} ms`);
        }),
      ]);
      // A supervisor brings it back; the ledger kept the charge (Redis) or rolled it back with the record (Postgres).
      await lab.restart('payments');
      const chargesAfterCrash = (await ledgerOf(lab, order.orderId)).length;

      // The dead holder's lease started before the crash, so it is over by now + margin.
      await sleep(Math.max(0, failedAt + LEASE_MS + LEASE_MARGIN_MS - Date.now()));
      const retryFrom = Date.now();
      const retry = await checkout(lab, order, key);
      const ledger = await ledgerOf(lab, order.orderId);
      const chargeId = retry.status === 201 ? (JSON.parse(retry.body) as { chargeId?: string }).chargeId : undefined;
      const sameCharge = chargeId !== undefined && chargeId === ledger[0]?.chargeId;
      return {
        orderId: order.orderId,
        outcome:
          `first checkout ${first.status ?? first.error} (payments killed after charging, ${chargesAfterCrash} charge in the ledger); ` +
          `retry with the same key after the lease: ${retry.status ?? retry.error}, ` +
          (chargesAfterCrash === 0
            ? `charged once (${ledger.length} line: the crashed charge was rolled back with its record)`
            : sameCharge
              ? 'answered with the first charge'
              : `charged again (${ledger.length} lines)`),
        details: {
          firstStatus: first.status ?? first.error,
          chargesAfterCrash,
          retryStatus: retry.status ?? retry.error,
          retryAnsweredWithFirstCharge: sameCharge,
          leaseMs: LEASE_MS,
          retryStartedMsAfterFailure: retryFrom - failedAt,
        },
      };
    },
  );
}

/** True when something accepts TCP connections at the database URL's host and port. */
function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 5432) });
    socket.setTimeout(1000, () => socket.destroy());
    socket.once('connect', () => {
      socket.end();
      resolve(true);
    });
    socket.once('close', () => resolve(false));
  });
}
