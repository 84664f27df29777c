import type { SeededRandom } from './seeded-random';

/**
 * The kinds of fault a soak injects, as chaos.json counts them:
 * - `kill`: SIGKILL of orders or payments (at a random moment, or right
 *   after payments' charge), restarted after a random delay;
 * - `term`: SIGTERM of orders or payments mid-traffic (graceful shutdown), restarted;
 * - `lostReply`: a reply dropped after the work, at any hop;
 * - `slowFirstAttempt`: a first attempt answered after its caller gave up, at any hop;
 * - `redisRestart`: the Redis of the records (and ledger) killed and started again;
 * - `redisPause`: that Redis paused (`CLIENT PAUSE` or `DEBUG SLEEP`) past the command timeout;
 * - `leaseExpiry`: payments frozen just before the charge, longer than the lease.
 */
export const FAULT_KINDS = ['kill', 'term', 'lostReply', 'slowFirstAttempt', 'redisRestart', 'redisPause', 'leaseExpiry'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** One fault of the schedule: what, where, when (ms after the soak starts) and for how long. */
export interface PlannedFault {
  atMs: number;
  kind: FaultKind;
  target: 'gateway' | 'orders' | 'payments' | 'redis';
  /** Its length: the restart delay, the pause, the freeze, how late the slow reply is. */
  ms: number;
  /** How it is done, where a kind has more than one way (`after-charge`, `debug-sleep`, ...). */
  how?: string;
}

/**
 * True for a fault armed at a service's fault point: it strikes only when
 * traffic reaches that point, so it is planned early enough to find some.
 */
export function strikesOnTraffic(fault: Pick<PlannedFault, 'kind' | 'how'>): boolean {
  return fault.kind === 'lostReply' || fault.kind === 'slowFirstAttempt' || fault.kind === 'leaseExpiry' || fault.how === 'after-charge';
}

/** The timings the schedule is drawn against. */
export interface ScheduleTimings {
  /** The idempotency lease of every service. */
  leaseMs: number;
  /** Per-attempt timeouts of the caller and of each hop's call to the next. */
  callerTimeoutMs: number;
  gatewayTimeoutMs: number;
  ordersTimeoutMs: number;
  /** The Redis clients' command timeout: a pause must outlast it. */
  commandTimeoutMs: number;
}

/**
 * One fault of each kind per this many seconds of soak: 30 of each planned in
 * the default 100 s, for over 20 that strike (an armed one may find no traffic
 * in time, a lane may fall behind its schedule).
 */
const SECONDS_PER_FAULT_OF_A_KIND = 3.4;

/** How many faults of each kind a soak of `durationMs` gets. */
export function faultsPerKind(durationMs: number): number {
  return Math.max(1, Math.ceil(durationMs / 1000 / SECONDS_PER_FAULT_OF_A_KIND));
}

/**
 * How many faults of each kind must strike in a soak that planned
 * `planned` of each: two thirds (20 of the default 30). A kind short of it
 * gets a top-up phase (see `runChaos`).
 */
export function strikesWanted(planned: number): number {
  return Math.ceil((planned * 2) / 3);
}

/**
 * The whole fault schedule of a soak, drawn from `random` alone: the same
 * seed gives the same schedule. Each kind gets `faultsPerKind` faults (or
 * the count `counts` gives it) at uniformly random times over the first 85%
 * of the soak (the rest lets the late ones land), so faults of different
 * kinds overlap at random.
 */
export function faultSchedule(
  random: SeededRandom,
  durationMs: number,
  timings: ScheduleTimings,
  counts?: Partial<Record<FaultKind, number>>,
): PlannedFault[] {
  const faults: PlannedFault[] = [];
  for (const kind of FAULT_KINDS) {
    const stream = random.fork(kind);
    const count = counts ? (counts[kind] ?? 0) : faultsPerKind(durationMs);
    for (let i = 0; i < count; i += 1) {
      const fault = draw(kind, stream, timings);
      // Armed faults wait for traffic, which the other faults keep scarce: they get the first 60% of the soak.
      faults.push({ atMs: Math.round(stream.between(0.02, strikesOnTraffic(fault) ? 0.6 : 0.85) * durationMs), ...fault });
    }
  }
  return faults.sort((a, b) => a.atMs - b.atMs || FAULT_KINDS.indexOf(a.kind) - FAULT_KINDS.indexOf(b.kind));
}

/** Where and how one fault of `kind` strikes. */
function draw(kind: FaultKind, random: SeededRandom, t: ScheduleTimings): Omit<PlannedFault, 'atMs'> {
  const hop = () => random.pick(['gateway', 'orders', 'payments'] as const);
  switch (kind) {
    case 'kill': {
      const target = random.pick(['orders', 'payments'] as const);
      // Half of payments' crashes land in the worst place: after the charge, before its record completes.
      const how = target === 'payments' && random.chance(0.5) ? 'after-charge' : 'at-random';
      return { kind, target, how, ms: random.int(50, 600) };
    }
    case 'term':
      return { kind, target: random.pick(['orders', 'payments'] as const), ms: random.int(50, 600) };
    case 'lostReply':
      return { kind, target: hop(), ms: 0 };
    case 'slowFirstAttempt': {
      const target = hop();
      // Later than the caller of that hop waits for one attempt: it retries while the first is still answering.
      const timeout = { gateway: t.callerTimeoutMs, orders: t.gatewayTimeoutMs, payments: t.ordersTimeoutMs }[target];
      return { kind, target, ms: Math.round(timeout * random.between(1.2, 2)) };
    }
    // Over twenty of each in a hundred seconds: short outages, or the services would be down more than up.
    case 'redisRestart':
      return { kind, target: 'redis', ms: random.int(50, 500) };
    case 'redisPause':
      return {
        kind,
        target: 'redis',
        how: random.pick(['client-pause', 'debug-sleep']),
        ms: Math.round(t.commandTimeoutMs * random.between(1.05, 1.4)),
      };
    case 'leaseExpiry':
      return { kind, target: 'payments', ms: t.leaseMs + random.int(200, 800) };
  }
}
