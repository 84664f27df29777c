import { FAIL_FAST_REDIS_OPTIONS } from '@idempotency-chain/idempotency/redis';
import { setTimeout as sleep } from 'node:timers/promises';
import { Lab, SERVICES } from '../lab-processes';
import { PrivateRedis } from '@idempotency-chain/local-processes';
import { budgets, SETUP } from '../write-up';
import { check, type Verdict } from './checker';
import { CHAOS_ACCOUNTS, ClientDriver, type DriverSettings } from './client-driver';
import {
  FAULT_KINDS,
  faultSchedule,
  faultsPerKind,
  strikesWanted,
  type FaultKind,
  type PlannedFault,
  type ScheduleTimings,
} from './fault-schedule';
import { FaultInjector } from './fault-injector';
import { History, type LedgerCharge } from './history';
import { SeededRandom } from './seeded-random';
import { Supervisor } from './supervisor';

/** Where payments keeps its records and ledger; gateway and orders are on Redis either way. */
export type ChaosStore = 'redis' | 'postgres';
export const CHAOS_STORES: readonly ChaosStore[] = ['redis', 'postgres'];

/** One soak on one store. */
export interface ChaosRunSettings {
  seed: number;
  store: ChaosStore;
  durationMs: number;
  /** PostgreSQL, for the `postgres` store. */
  databaseUrl: string;
  log: (line: string) => void;
}

/** What one soak recorded, and what the checker found in it. */
export interface ChaosRunOutcome {
  settings: ChaosRunSettings;
  history: History;
  verdict: Verdict;
  /** How long the users pressed (the soak and its top-ups), the settle phase, and the whole run. */
  soakMs: number;
  settleMs: number;
  tookMs: number;
  /** How many faults of each kind were planned (what happened is in the history). */
  plannedPerKind: number;
  /** Executions at payments that lost their lease, or whose completion was refused as stale, as payments logged them. */
  leaseLost: number;
  restarts: Record<string, number>;
}

/** Every service's lease: short, so a crashed holder frees its key fast and a frozen one loses it soon. */
const LEASE_MS = 1000;
/** What the services' Redis clients allow a command: a pause must outlast it. */
const COMMAND_TIMEOUT_MS = FAIL_FAST_REDIS_OPTIONS.commandTimeout ?? 1000;
/** The users: 1,400 checkouts in the default 100 s soak, well within what a loaded 2-core machine serves. */
const USERS: DriverSettings = {
  intentsPerSecond: 14,
  maxInFlight: 400,
  duplicateShare: 0.15,
  attemptTimeoutMs: SETUP.callerBudgetMs,
  attemptsPerCall: 10,
};
/** A top-up phase, and at most how many: 30 s more at most, and the default run stays under 5 minutes. */
const TOP_UP_MS = 10_000;
const TOP_UP_ROUNDS = 3;
/** Ledger reads at once after the settle phase. */
const READ_CONCURRENCY = 8;

const TIMINGS: ScheduleTimings = {
  leaseMs: LEASE_MS,
  callerTimeoutMs: USERS.attemptTimeoutMs,
  gatewayTimeoutMs: SETUP.gatewayTimeoutMs,
  ordersTimeoutMs: SETUP.ordersTimeoutMs,
  commandTimeoutMs: COMMAND_TIMEOUT_MS,
};

/**
 * One soak: the three services as processes on a Redis of the run's own
 * (durable: `appendfsync always`), payments on PostgreSQL with transactional
 * completion for the `postgres` store; users driving checkouts while the
 * seed's fault schedule strikes; then the settle phase (faults off, every
 * intent retried with its key until it has a final answer), the ledger read
 * for every intent, and the checker.
 */
export async function runChaos(settings: ChaosRunSettings): Promise<ChaosRunOutcome> {
  const { store, durationMs, log } = settings;
  const started = Date.now();
  const random = new SeededRandom(settings.seed);
  const redis = await PrivateRedis.start({ durable: true });
  const history = new History(Date.now());
  const hops = budgets();
  const lab = new Lab({
    env: { IDEMPOTENCY_STORE: 'redis', REDIS_URL: redis.url, IDEMPOTENCY_LEASE_MS: String(LEASE_MS), LOG_LEVEL: 'info' },
    perService: {
      ...hops,
      ...(store === 'postgres' && { payments: { IDEMPOTENCY_STORE: 'postgres', DATABASE_URL: settings.databaseUrl } }),
    },
    accounts: CHAOS_ACCOUNTS,
    onEvent: (event) => history.addServiceEvent(event),
  });
  const supervisor = new Supervisor(lab, SERVICES, () => random.int(50, 600));
  let client: ClientDriver | undefined;
  try {
    await lab.start();
    client = new ClientDriver(lab, history, random.fork('users'), USERS);
    supervisor.start();
    const schedule = faultSchedule(random.fork('faults'), durationMs, TIMINGS);
    const injector = new FaultInjector(lab, redis, supervisor, history);
    history.startedAt = Date.now();
    let soaking = true;
    log(`${store}: soak of ${Math.round(durationMs / 1000)} s, ${schedule.length} faults planned (seed ${settings.seed})`);
    const progress = setInterval(
      () =>
        log(
          `${store}: ${Math.round((Date.now() - history.startedAt) / 1000)} s: ${history.intents.length} checkouts, ${history.faults.length} faults`,
        ),
      15_000,
    );
    const users = client.soak(() => !soaking);
    users.catch(() => undefined); // awaited after the settle; a failure meanwhile must not go unhandled
    try {
      await injectFor(injector, schedule, durationMs);
      // An armed fault strikes only when traffic reaches its point, which the other faults keep scarce:
      // a kind short of its strikes gets short phases of its own, the users still pressing.
      const wanted = strikesWanted(faultsPerKind(durationMs));
      for (let round = 0; round < TOP_UP_ROUNDS; round += 1) {
        const short = shortKinds(history, wanted);
        if (Object.keys(short).length === 0) break;
        log(
          `${store}: top-up ${round + 1}: ${Object.entries(short)
            .map(([kind, n]) => `${n} ${kind}`)
            .join(', ')}`,
        );
        const topUp = faultSchedule(random.fork(`top-up ${round}`), TOP_UP_MS, TIMINGS, short);
        await injectFor(new FaultInjector(lab, redis, supervisor, history), topUp, TOP_UP_MS);
      }
    } finally {
      soaking = false;
      clearInterval(progress);
    }
    const soakMs = Date.now() - history.startedAt;

    // Settle: faults off, everything up, every open intent retried with its key.
    const settleFrom = Date.now();
    await everythingUp(lab, redis);
    log(`${store}: settling ${history.intents.length} checkouts ...`);
    // The calls still under way from the soak go on beside the settle's, with the same keys, as a user's
    // retry would: the settle does not wait out their backoff first.
    await client.settle();
    await users;
    await supervisor.stop();
    // A holder still running past the settle (frozen, slow) has a lease at most: let it end before the ledger is read.
    await sleep(LEASE_MS + 1000);
    await readLedger(lab, history);
    const settleMs = Date.now() - settleFrom;

    const verdict = check(history);
    history.serviceEvents = lab.events.filter(
      (event) => event.keyHash !== undefined && history.intentOfKeyHash(event.keyHash) !== undefined,
    );
    const leaseLost = lab.events.filter(
      (e) =>
        e.service === 'payments' && e.event === 'idempotency' && (e.outcome === 'lease_lost' || e.outcome === 'stale_completion_refused'),
    ).length;
    return {
      settings,
      history,
      verdict,
      soakMs,
      settleMs,
      tookMs: Date.now() - started,
      plannedPerKind: faultsPerKind(durationMs),
      leaseLost,
      restarts: Object.fromEntries(supervisor.restarts),
    };
  } finally {
    await supervisor.stop();
    await client?.close();
    await lab.stop();
    await redis.dispose();
  }
}

/** Run `schedule` from now for `durationMs`, then stop injecting. */
async function injectFor(injector: FaultInjector, schedule: PlannedFault[], durationMs: number): Promise<void> {
  await Promise.all([injector.run(schedule, Date.now()), sleep(durationMs).then(() => injector.stop())]);
}

/** The kinds that struck fewer than `wanted` times so far, with how many more each needs. */
function shortKinds(history: History, wanted: number): Partial<Record<FaultKind, number>> {
  const short: Partial<Record<FaultKind, number>> = {};
  for (const kind of FAULT_KINDS) {
    const struck = history.faults.filter((fault) => fault.kind === kind).length;
    if (struck < wanted) short[kind] = wanted - struck;
  }
  return short;
}

/** Disarm every fault point and wait until the Redis and every service answer, as they must for the settle phase. */
async function everythingUp(lab: Lab, redis: PrivateRedis): Promise<void> {
  for (const service of SERVICES) {
    for (;;) {
      try {
        await lab.arm(service, {});
        const health = await fetch(`${lab.url(service)}/health`, { signal: AbortSignal.timeout(3000) });
        await health.arrayBuffer();
        if (health.ok && redis.running) break;
      } catch {
        // Still booting, or its store is not back yet.
      }
      await sleep(200);
    }
  }
}

/** Every intent's ledger lines, read from payments over HTTP as the scenarios read them. */
async function readLedger(lab: Lab, history: History): Promise<void> {
  const queue = [...history.intents];
  await Promise.all(
    Array.from({ length: READ_CONCURRENCY }, async () => {
      for (let intent = queue.shift(); intent; intent = queue.shift()) {
        const response = await fetch(`${lab.url('payments')}/charges?orderId=${encodeURIComponent(intent.orderId)}`, {
          headers: lab.ledgerHeaders(),
        });
        if (!response.ok) throw new Error(`reading the ledger of ${intent.orderId}: ${response.status}`);
        history.ledger.set(intent.id, ((await response.json()) as { charges: LedgerCharge[] }).charges);
      }
    }),
  );
}
