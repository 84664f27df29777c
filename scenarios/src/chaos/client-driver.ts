import { IdempotentHttpClient, isHttpCallError } from '@idempotency-chain/http-client';
import { statusOutcome } from '@idempotency-chain/idempotency';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Lab } from '../lab-processes';
import type { Call, History, Intent } from './history';
import type { SeededRandom } from './seeded-random';

/** The users' accounts, `acct-1` to `acct-20`: each has its own key at the gateway. */
export const CHAOS_ACCOUNTS: readonly string[] = Array.from({ length: 20 }, (_, i) => `acct-${i + 1}`);

/** How the users behave. */
export interface DriverSettings {
  /** New intents per second, on average (they arrive at random, whatever the ones before got). */
  intentsPerSecond: number;
  /** Bound on intents under way at once: past it, a new one waits. */
  maxInFlight: number;
  /** Share of intents sent by two callers at once with the same key (a double click). */
  duplicateShare: number;
  /** Per-attempt timeout of a caller, and its attempts per call. */
  attemptTimeoutMs: number;
  attemptsPerCall: number;
}

/** Bound on the settle phase's retries of one intent. */
const SETTLE_BOUND_MS = 120_000;
/** Intents retried at once in the settle phase. */
const SETTLE_CONCURRENCY = 8;

/**
 * True when a caller stops retrying on this answer: a 2xx, or a 4xx the
 * server would replay as final (not 408/409/425/429). A 5xx is not final:
 * whatever it says, a caller with a key may retry it safely.
 */
export function isFinalAnswer(status: number | undefined): boolean {
  if (status === undefined || status >= 500) return false;
  return status < 300 || (status >= 400 && !statusOutcome(status).retryable);
}

/**
 * The users of the soak: each presses Pay once for a fresh order with its
 * own `Idempotency-Key` (some press twice at once), and its client retries with
 * that key, with jittered exponential backoff, until it gets a final answer
 * or runs out of attempts and gives up. Every attempt and answer goes into
 * the history. After the soak, `settle` retries every intent left without a
 * final answer, with its key, until it gets one.
 */
export class ClientDriver {
  private readonly client: IdempotentHttpClient;

  constructor(
    private readonly lab: Lab,
    private readonly history: History,
    private readonly random: SeededRandom,
    private readonly settings: DriverSettings,
  ) {
    this.client = new IdempotentHttpClient({
      baseUrl: lab.url('gateway'),
      keyPolicy: 'propagated',
      attemptTimeoutMs: settings.attemptTimeoutMs,
      maxAttempts: settings.attemptsPerCall,
      backoff: { initialMs: 200, maxMs: 3000 },
      onAttempt: (event) => history.addAttempt(event),
    });
  }

  /**
   * Start intents at random (a Poisson arrival of `intentsPerSecond`) until
   * `ends()` says the soak is over, as users do: an outage does not stop
   * new users from pressing Pay. Resolves once every call under way has ended.
   */
  async soak(ends: () => boolean): Promise<void> {
    const underWay = new Set<Promise<void>>();
    while (!ends()) {
      if (underWay.size >= this.settings.maxInFlight) await Promise.race(underWay);
      const press = this.press().finally(() => underWay.delete(press));
      underWay.add(press);
      await sleep(-Math.log(1 - this.random.next()) * (1000 / this.settings.intentsPerSecond));
    }
    await Promise.all(underWay);
  }

  /** Retry every intent without a final answer, with its key, until it has one (bounded). */
  async settle(): Promise<void> {
    const answered = new Set(this.history.calls.filter((call) => isFinalAnswer(call.status)).map((call) => call.intent));
    const open = this.history.intents.filter((intent) => !answered.has(intent.id));
    const deadline = Date.now() + SETTLE_BOUND_MS;
    await Promise.all(
      Array.from({ length: SETTLE_CONCURRENCY }, async () => {
        for (let intent = open.shift(); intent; intent = open.shift()) {
          while (Date.now() < deadline && !isFinalAnswer((await this.call(intent, 0, 'settle')).status)) await sleep(500);
        }
      }),
    );
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  /** One user action: a fresh order and key, sent once or twice at the same time. */
  private async press(): Promise<void> {
    const intent = this.history.addIntent({
      orderId: `order-chaos-${randomUUID()}`,
      account: `acct-${this.random.int(1, CHAOS_ACCOUNTS.length)}`,
      amountCents: this.random.int(100, 99_999),
      key: randomUUID(),
      duplicate: this.random.chance(this.settings.duplicateShare),
    });
    await Promise.all([this.call(intent, 0, 'soak'), ...(intent.duplicate ? [this.call(intent, 1, 'soak')] : [])]);
  }

  /** One call: the client's attempts with the intent's key, and the answer it ended with. */
  private async call(intent: Intent, caller: number, phase: Call['phase']): Promise<Call> {
    const startedAt = Date.now();
    const order = { orderId: intent.orderId, account: intent.account, amountCents: intent.amountCents };
    let call: Call;
    try {
      const response = await this.client.post('/checkout', order, {
        key: intent.key,
        headers: { authorization: this.lab.authorization(intent.account) },
      });
      call = {
        intent: intent.id,
        caller,
        phase,
        startedAt,
        endedAt: Date.now(),
        attempts: response.attempts,
        status: response.status,
        body: response.body,
        replayed: response.replayed,
      };
    } catch (error) {
      if (!isHttpCallError(error)) throw error;
      call = { intent: intent.id, caller, phase, startedAt, endedAt: Date.now(), attempts: error.attempts, error: error.message };
    }
    this.history.addCall(call);
    return call;
  }
}
