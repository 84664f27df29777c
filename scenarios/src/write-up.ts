import { IdempotentHttpClient, isHttpCallError } from '@idempotency-chain/http-client';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Lab, type LabSettings } from './lab-processes';
import type { LabEvent } from './timeline';

const NEXT_HOP: Record<string, string> = { caller: 'gateway', gateway: 'orders', orders: 'payments' };

/** The four policies of the write-up, in the order of its table. */
export const POLICIES = ['none', 'per-attempt', 'propagated', 'fingerprint'] as const;
export type Policy = (typeof POLICIES)[number];

/** The faults and budgets of the write-up, in one place. */
export const SETUP = {
  /** Payments answers a first attempt this late; the charge is already written. */
  slowFirstAttemptMs: 1500,
  /** Orders' first reply is lost after its work is done. */
  ordersLostReplies: 1,
  /** The caller sends one checkout and waits this long for it. */
  callerBudgetMs: 3000,
  /** Gateway -> orders and orders -> payments: per-attempt timeouts (ms), 2 attempts each. */
  gatewayTimeoutMs: 600,
  ordersTimeoutMs: 300,
  /** Wait this long after the slow first attempt before the later press. */
  settleMarginMs: 1000,
} as const;

/** Each hop's retry budget as SETUP states it, in the variables the services read. */
export function budgets(): NonNullable<LabSettings['perService']> {
  return {
    gateway: { DOWNSTREAM_TIMEOUT_MS: String(SETUP.gatewayTimeoutMs), DOWNSTREAM_ATTEMPTS: '2' },
    orders: { DOWNSTREAM_TIMEOUT_MS: String(SETUP.ordersTimeoutMs), DOWNSTREAM_ATTEMPTS: '2' },
  };
}

/** What one policy produced. */
export interface PolicyRun {
  scenario: 'write-up';
  policy: Policy;
  store: 'redis' | 'memory';
  charges: number;
  caller: { answered: boolean; status?: number; attempts: number; durationMs: number; failure?: string };
  laterPress: {
    status?: number;
    latencyMs: number;
    /** Some hop answered from its store; `replayedBy` names the outermost. */
    replayed: boolean;
    replayedBy?: string;
    chargedAgain: boolean;
    chargesAfter: number;
  };
  durationMs: number;
  events: LabEvent[];
  ledger: Array<{ chargeId: string; epoch: number; at: string }>;
}

interface LedgerView {
  count: number;
  charges: Array<{ chargeId: string; epoch: number; at: string }>;
}

/**
 * One checkout through gateway -> orders -> payments under `policy`, with
 * the write-up's faults, then the user's later press once all has settled.
 * The ledger's count is the answer. `onEvent` sees the timeline as it is
 * recorded (the lab console draws it live).
 */
export async function runWriteUp(
  policy: Policy,
  store: 'redis' | 'memory',
  redisUrl?: string,
  onEvent?: (event: LabEvent) => void,
): Promise<PolicyRun> {
  const started = Date.now();
  const lab = new Lab({
    ...(onEvent && { onEvent }),
    env: { KEY_POLICY: policy, IDEMPOTENCY_STORE: store, ...(redisUrl ? { REDIS_URL: redisUrl } : {}), LOG_LEVEL: 'info' },
    // The budgets RESULTS.md states, set here so the text and the run cannot drift apart.
    perService: budgets(),
  });
  await lab.start();
  try {
    await lab.arm('payments', { slowFirstAttemptMs: SETUP.slowFirstAttemptMs });
    await lab.arm('orders', { loseReplies: SETUP.ordersLostReplies });
    const caller = callerFor(lab, policy);
    const order = { orderId: `order-${policy}-${randomUUID().slice(0, 8)}`, account: 'acct-42', amountCents: 500 };
    const key = policy === 'propagated' ? randomUUID() : undefined;

    const pressed = Date.now();
    const first = await press(caller, order, key);
    // Settled: the slow first attempt has answered (into the void) and every retry is over.
    await sleep(Math.max(0, pressed + SETUP.slowFirstAttemptMs + SETUP.settleMarginMs - Date.now()));
    await lab.arm('payments', {});
    const charges = (await ledger(lab, order.orderId)).count;

    const laterFrom = Date.now();
    const later = await press(caller, order, key);
    // Answered from a store at some hop: the outermost one that replayed says where.
    const replayedBy = lab.events.find((e) => e.event === 'attempt' && (e.startedAt ?? 0) >= laterFrom && e.replayed);
    const after = await ledger(lab, order.orderId);
    await caller.close();
    return {
      scenario: 'write-up',
      policy,
      store,
      charges,
      caller: first,
      laterPress: {
        status: later.status,
        latencyMs: later.durationMs,
        replayed: Boolean(replayedBy),
        replayedBy: replayedBy ? NEXT_HOP[replayedBy.service] : undefined,
        chargedAgain: after.count > charges,
        chargesAfter: after.count,
      },
      durationMs: Date.now() - started,
      events: lab.events,
      ledger: after.charges.map(({ chargeId, epoch, at }) => ({ chargeId, epoch, at })),
    };
  } finally {
    await lab.stop();
  }
}

/**
 * The user's client at the gateway: one attempt within the caller's budget,
 * paying from `account` with its key, sending an idempotency key only under
 * `propagated` (it is the caller's key that is propagated), each attempt recorded in the lab's timeline as the caller's.
 */
export function callerFor(lab: Lab, policy: Policy, account = 'acct-42'): IdempotentHttpClient {
  return new IdempotentHttpClient({
    baseUrl: lab.url('gateway'),
    headers: { authorization: lab.authorization(account) },
    keyPolicy: policy === 'propagated' ? 'propagated' : 'none',
    maxAttempts: 1,
    attemptTimeoutMs: SETUP.callerBudgetMs,
    onAttempt: (event) => lab.record({ ...event, event: 'attempt', service: 'caller', time: event.startedAt }),
  });
}

/** What the caller got from one press of "Pay". */
export interface PressAnswer {
  answered: boolean;
  status?: number;
  attempts: number;
  durationMs: number;
  /** The gateway answered from its store. */
  replayed: boolean;
  failure?: string;
}

/**
 * One press of "Pay": one checkout through `caller`, with `key` when the
 * caller sends one, and `headers` when it sends more (a traced caller's `traceparent`).
 */
export async function press(
  caller: IdempotentHttpClient,
  order: object,
  key?: string,
  headers?: Record<string, string>,
): Promise<PressAnswer> {
  const started = performance.now();
  try {
    const response = await caller.post('/checkout', order, { ...(key && { key }), ...(headers && { headers }) });
    const durationMs = Math.round(performance.now() - started);
    return { answered: true, status: response.status, attempts: response.attempts, durationMs, replayed: response.replayed };
  } catch (error) {
    const durationMs = Math.round(performance.now() - started);
    // A retryable answer (502, 503, 504) ends the caller's only attempt as an error: report what it said.
    const status = isHttpCallError(error) ? error.lastStatus : undefined;
    return { answered: status !== undefined, status, attempts: 1, durationMs, replayed: false, failure: (error as Error).message };
  }
}

async function ledger(lab: Lab, orderId: string): Promise<LedgerView> {
  const response = await fetch(`${lab.url('payments')}/charges?orderId=${encodeURIComponent(orderId)}`, { headers: lab.ledgerHeaders() });
  return (await response.json()) as LedgerView;
}
