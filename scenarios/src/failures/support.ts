import { hashKey } from '@idempotency-chain/idempotency';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Lab, type LabSettings, type Service } from '../lab-processes';
import { REPO_ROOT } from '../output-paths';
import type { LedgerLine, ScenarioContext, VariantRun } from '../scenario';

/** A fresh order, so no run ever sees another's records or ledger lines. */
export function newOrder(scenario: string, amountCents = 500) {
  return { orderId: `order-${scenario}-${randomUUID().slice(0, 8)}`, account: 'acct-42', amountCents };
}

/** One answer the caller got. */
export interface Answer {
  status?: number;
  body: string;
  replayed: boolean;
  retryAfter?: string;
  ms: number;
  error?: string;
}

/**
 * One raw checkout at the gateway, as a user's client sends it: no retry of
 * its own, so what happens below is the chain's doing alone.
 */
export async function checkout(
  lab: Lab,
  order: { account: string; [field: string]: unknown },
  key?: string,
  budgetMs = 10_000,
): Promise<Answer> {
  const started = Date.now();
  try {
    const response = await fetch(`${lab.url('gateway')}/checkout`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: lab.authorization(order.account),
        ...(key ? { 'idempotency-key': key } : {}),
      },
      body: JSON.stringify(order),
      signal: AbortSignal.timeout(budgetMs),
    });
    const body = await response.text();
    lab.events.push({
      service: 'caller',
      event: 'attempt',
      time: started,
      startedAt: started,
      durationMs: Date.now() - started,
      path: '/checkout',
      attempt: 1,
      keyHash: key ? hashKey(key) : undefined,
      outcome: response.ok ? 'ok' : 'http-error',
      status: response.status,
      replayed: response.headers.get('idempotent-replayed') === 'true',
    });
    return {
      status: response.status,
      body,
      replayed: response.headers.get('idempotent-replayed') === 'true',
      retryAfter: response.headers.get('retry-after') ?? undefined,
      ms: Date.now() - started,
    };
  } catch (error) {
    return { body: '', replayed: false, ms: Date.now() - started, error: (error as Error).message };
  }
}

/** The ledger lines of one order, read from one or more payments processes. */
export async function ledgerOf(lab: Lab, orderId: string, processes: Array<Service | string> = ['payments']): Promise<LedgerLine[]> {
  const lines = new Map<string, LedgerLine>();
  for (const name of processes) {
    const response = await fetch(`${lab.url(name)}/charges?orderId=${encodeURIComponent(orderId)}`, { headers: lab.ledgerHeaders() });
    const view = (await response.json()) as { charges: LedgerLine[] };
    for (const line of view.charges) lines.set(line.chargeId, line);
  }
  return [...lines.values()].sort((a, b) => a.at.localeCompare(b.at));
}

/** Sum of a Prometheus counter's samples whose labels include `labels`. */
export function counter(metrics: string, name: string, labels: Record<string, string> = {}): number {
  return metrics
    .split('\n')
    .filter((line) => line.startsWith(name) && Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

/** Count of each status among answers, e.g. `{ "201": 49, "409": 1 }`. */
export function statusCounts(answers: Answer[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const answer of answers) {
    const status = String(answer.status ?? 'none');
    counts[status] = (counts[status] ?? 0) + 1;
  }
  return counts;
}

/** What a variant's body returns; the harness adds the timeline and the ledger. */
export interface VariantOutcome {
  orderId: string;
  outcome: string;
  details?: Record<string, unknown>;
  /** Processes whose ledgers count (default payments). */
  ledgers?: Array<Service | string>;
}

/**
 * Run one variant on a fresh lab: start it, drive it, read the ledger, stop it.
 * The lab's store is the run's unless the variant's env names another.
 */
export async function runVariant(
  context: ScenarioContext,
  variant: string,
  expectedCharges: number,
  settings: LabSettings,
  body: (lab: Lab) => Promise<VariantOutcome>,
): Promise<VariantRun> {
  const started = Date.now();
  const lab = new Lab({
    ...settings,
    env: {
      IDEMPOTENCY_STORE: context.store,
      ...(context.redisUrl ? { REDIS_URL: context.redisUrl } : {}),
      LOG_LEVEL: 'info',
      ...settings.env,
    },
  });
  context.log(`  ${variant} ...`);
  try {
    await lab.start();
    const result = await body(lab);
    const ledger = await ledgerOf(lab, result.orderId, result.ledgers);
    return {
      variant,
      charges: ledger.length,
      expectedCharges,
      outcome: result.outcome,
      details: result.details ?? {},
      durationMs: Date.now() - started,
      events: lab.events,
      ledger,
    };
  } finally {
    await lab.stop();
  }
}

/**
 * `file:line` of the first line of `file` (from the repository root) that
 * contains `needle`: looked up when the scenario runs, so the reference
 * follows the code as it moves. The bare path when the line is not found.
 */
export function codeRef(file: string, needle: string): string {
  const path = resolve(REPO_ROOT, file);
  if (!existsSync(path)) return file;
  const index = readFileSync(path, 'utf8')
    .split('\n')
    .findIndex((line) => line.includes(needle));
  return index < 0 ? file : `${file}:${index + 1}`;
}

/** Poll `check` every `everyMs` until it is truthy or `timeoutMs` has passed; the last value. */
export async function until<T>(check: () => T | Promise<T>, timeoutMs: number, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value || Date.now() >= deadline) return value;
    await sleep(everyMs);
  }
}

/** Why a Redis-only scenario cannot run in `context`, or undefined when it can. */
export function needsRedis(context: ScenarioContext, what: string): string | undefined {
  if (context.store === 'redis' && context.redisUrl) return undefined;
  return `needs Redis (${what}); this run has only the in-memory store: set REDIS_URL, or install redis-server or Docker`;
}

/** Resolve once payments has exited (the crash the lab armed); reject, saying it did not `what`, after `boundMs`. */
export async function paymentsCrashed(lab: Lab, boundMs: number, what: string): Promise<void> {
  await Promise.race([
    lab.exited('payments'),
    sleep(boundMs).then(() => {
      throw new Error(`payments did not ${what} and crash within ${boundMs} ms`);
    }),
  ]);
}
