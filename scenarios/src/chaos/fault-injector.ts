import { setTimeout as sleep } from 'node:timers/promises';
import type { Lab, Service } from '../lab-processes';
import { redisCommand, type PrivateRedis } from '@idempotency-chain/local-processes';
import { strikesOnTraffic, type FaultKind, type PlannedFault } from './fault-schedule';
import type { FaultRecord, History } from './history';
import type { Supervisor } from './supervisor';

/** Bound on a graceful shutdown before the supervisor's patience ends in SIGKILL. */
const TERM_BOUND_MS = 8000;
/** How often a lane looks again for its target to be up. */
const POLL_MS = 100;
/**
 * How long a service serves before a lane kills or stops it again: a
 * supervisor restarting a process that dies while it boots is a crash loop,
 * not the outage under test.
 */
const MIN_UPTIME_MS = 500;

/**
 * Injects a fault schedule into a running lab and its Redis. Signals and
 * outages that strike the same thing (a service's process, the Redis) go in
 * one lane, in order, each once its target is up again; lanes run side by
 * side, and each armed fault on its own, so faults of different kinds overlap. A fault armed at a fault point (a lost reply,
 * a slow first reply, a frozen holder, a crash after the charge) counts once
 * the service logs that it struck (see `History.addServiceEvent`).
 */
export class FaultInjector {
  private active = true;
  private end: () => void = () => undefined;
  /** Resolves when the soak ends. */
  private readonly ended = new Promise<'ended'>((resolve) => (this.end = () => resolve('ended')));
  /** Those waiting for an armed fault to strike, by kind and service, longest waiting first. */
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(
    private readonly lab: Lab,
    private readonly redis: PrivateRedis | undefined,
    private readonly supervisor: Supervisor,
    private readonly history: History,
  ) {
    history.on('fault', (fault: FaultRecord) => {
      const [first, ...rest] = this.waiting.get(`${fault.kind} ${fault.target}`) ?? [];
      if (!first) return;
      this.waiting.set(`${fault.kind} ${fault.target}`, rest);
      first();
    });
  }

  /** Run the schedule from `startedAt` until `stop()`; resolves when every lane has ended. */
  async run(schedule: PlannedFault[], startedAt: number): Promise<void> {
    const lanes = new Map<string, PlannedFault[]>();
    for (const fault of schedule) {
      // A Redis the run does not own cannot be stopped: those faults are left out.
      if (fault.target === 'redis' && !this.redis) continue;
      // A fault armed at a fault point waits for traffic to strike: on its own, so that it holds up no other.
      const lane = strikesOnTraffic(fault) ? `armed ${lanes.size}` : fault.target;
      lanes.set(lane, [...(lanes.get(lane) ?? []), fault]);
    }
    await Promise.all(
      [...lanes.values()].map(async (faults) => {
        for (const fault of faults) {
          await sleep(Math.max(0, startedAt + fault.atMs - Date.now()));
          if (!this.active) return;
          await this.inject(fault);
        }
      }),
    );
  }

  /** Inject no more faults: lanes end after the fault under way. */
  stop(): void {
    this.active = false;
    this.end();
  }

  private async inject(fault: PlannedFault): Promise<void> {
    switch (fault.kind) {
      case 'kill':
        if (fault.how === 'after-charge') {
          this.supervisor.restartAfter(fault.target as Service, fault.ms);
          return this.armUntilStruck(fault, { crashAfterSideEffect: 1 });
        }
        return this.signal(fault, 'SIGKILL');
      case 'term':
        return this.signal(fault, 'SIGTERM');
      case 'lostReply':
        return this.armUntilStruck(fault, { loseReplies: 1 });
      case 'slowFirstAttempt':
        return this.armUntilStruck(fault, { slowFirstReplies: 1, slowReplyMs: fault.ms });
      case 'leaseExpiry':
        return this.armUntilStruck(fault, { stallHolders: 1, stallHolderMs: fault.ms });
      case 'redisRestart':
        return this.restartRedis(fault);
      case 'redisPause':
        return this.pauseRedis(fault);
    }
  }

  /** SIGKILL or SIGTERM the service once it runs; the supervisor starts it again after the fault's delay. */
  private async signal(fault: PlannedFault, signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
    const service = fault.target as Service;
    let up: boolean;
    do {
      if (!(await this.whenUp(() => this.lab.listens(service)))) return;
      await sleep(MIN_UPTIME_MS);
      up = this.lab.listens(service);
    } while (!up);
    this.supervisor.restartAfter(service, fault.ms);
    const at = Date.now();
    if (!this.lab.kill(service, signal)) return;
    this.record(fault, at);
    if (signal === 'SIGTERM') {
      // A shutdown that hangs is ended the way a supervisor ends it.
      const exited = await Promise.race([this.lab.exited(service).then(() => true), sleep(TERM_BOUND_MS).then(() => false)]);
      if (!exited) this.lab.kill(service, 'SIGKILL');
    }
    await this.lab.exited(service);
  }

  /**
   * Arm a fault point of the fault's service, adding to whatever is armed
   * there, and wait until it has struck (the service logs it). A process that
   * died meanwhile took the armed fault with it: arm it again on the next one.
   */
  private async armUntilStruck(fault: PlannedFault, plan: Record<string, number>): Promise<void> {
    const service = fault.target as Service;
    const kind: FaultKind = fault.kind;
    while (this.active) {
      if (!(await this.whenUp(() => this.lab.running(service)))) return;
      const exited = this.lab.exited(service);
      // Listening before arming: the fault may strike before the PATCH is even answered.
      const struck = this.struck(kind, service);
      try {
        // No timeout: a PATCH that timed out against a frozen process would still arm it once it thaws.
        const response = await fetch(`${this.lab.url(service)}/lab/faults`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(plan),
        });
        await response.arrayBuffer();
        if (response.status !== 204) throw new Error(`PATCH /lab/faults: ${response.status}`);
      } catch {
        struck.cancel();
        await sleep(POLL_MS); // not listening yet (booting), or gone: nothing was armed
        continue;
      }
      const outcome = await Promise.race([struck.promise.then(() => 'struck' as const), exited.then(() => 'exited' as const), this.ended]);
      struck.cancel();
      if (outcome !== 'exited') return;
    }
  }

  /**
   * Resolves when a fault of `kind` strikes `service` and is this waiter's:
   * each strike goes to the longest waiting of those that armed one, so two
   * faults armed one after the other are counted as two strikes, never one.
   */
  private struck(kind: FaultKind, service: Service): { promise: Promise<void>; cancel: () => void } {
    const key = `${kind} ${service}`;
    let waiter: () => void = () => undefined;
    const promise = new Promise<void>((resolve) => (waiter = resolve));
    this.waiting.set(key, [...(this.waiting.get(key) ?? []), waiter]);
    return {
      promise,
      cancel: () =>
        this.waiting.set(
          key,
          (this.waiting.get(key) ?? []).filter((w) => w !== waiter),
        ),
    };
  }

  /** Kill the Redis (SIGKILL: its append-only file keeps what it acknowledged) and start it again after the fault's delay. */
  private async restartRedis(fault: PlannedFault): Promise<void> {
    const redis = this.redis!;
    if (!(await this.whenUp(() => redis.running))) return;
    const at = Date.now();
    await redis.stop();
    this.record(fault, at);
    await sleep(fault.ms);
    // Even when the soak is over: the settle phase needs it.
    for (;;) {
      try {
        await redis.start();
        return;
      } catch {
        await sleep(POLL_MS);
      }
    }
  }

  /** Pause the Redis past the command timeout: every client stalls (`CLIENT PAUSE`), or the server itself (`DEBUG SLEEP`). */
  private async pauseRedis(fault: PlannedFault): Promise<void> {
    const redis = this.redis!;
    if (!(await this.whenUp(() => redis.running))) return;
    const at = Date.now();
    const reply =
      fault.how === 'debug-sleep'
        ? await redisCommand(redis.port, ['DEBUG', 'SLEEP', (fault.ms / 1000).toFixed(3)], fault.ms + 5000)
        : await redisCommand(redis.port, ['CLIENT', 'PAUSE', String(fault.ms), 'ALL'], 2000);
    if (reply !== '+OK') return;
    this.record(fault, at);
    // One pause at a time: the lane's next fault starts after this one ends.
    await sleep(Math.max(0, at + fault.ms - Date.now()));
  }

  private record(fault: PlannedFault, at: number): void {
    this.history.addFault({ kind: fault.kind, target: fault.target, ...(fault.how && { how: fault.how }), at, ms: fault.ms });
  }

  /** Wait until `up()`; false when the soak ended first. */
  private async whenUp(up: () => boolean): Promise<boolean> {
    while (this.active && !up()) await sleep(POLL_MS);
    return this.active;
  }
}
