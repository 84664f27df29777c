import { setTimeout as sleep } from 'node:timers/promises';
import type { Lab, Service } from '../lab-processes';

/** Wait between two failed starts (the Redis a service needs at boot may be down). */
const RETRY_START_MS = 300;

/**
 * What a process supervisor (systemd, Kubernetes) does for the lab's
 * services: whenever one exits, for whatever reason, start it again after a
 * delay, and again until it answers. The delay of the next restart of a
 * service is the one its fault asked for (`restartAfter`), else `defaultMs`.
 */
export class Supervisor {
  private stopped = false;
  private readonly watching: Array<Promise<void>> = [];
  private readonly delays = new Map<string, number>();
  /** Restarts done, per service. */
  readonly restarts = new Map<string, number>();

  constructor(
    private readonly lab: Lab,
    private readonly services: readonly Service[],
    private readonly defaultMs: () => number,
  ) {}

  /** Watch every service. */
  start(): void {
    for (const service of this.services) this.watching.push(this.watch(service));
  }

  /** The next restart of `service` waits `ms`. */
  restartAfter(service: Service, ms: number): void {
    this.delays.set(service, ms);
  }

  /** True when every service runs (it may be booting). */
  allRunning(): boolean {
    return this.services.every((service) => this.lab.running(service));
  }

  /** Stop restarting; resolves once any restart under way has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.watching);
  }

  private async watch(service: Service): Promise<void> {
    while (!this.stopped) {
      // Resolves on this process's exit, or at once once stop() is called.
      await Promise.race([this.lab.exited(service), this.until(() => this.stopped)]);
      if (this.stopped && this.lab.running(service)) return;
      await sleep(this.delays.get(service) ?? this.defaultMs());
      this.delays.delete(service);
      // Even after stop(): a service left down would leave the settle phase without it.
      for (;;) {
        try {
          await this.lab.startService(service);
          this.restarts.set(service, (this.restarts.get(service) ?? 0) + 1);
          break;
        } catch {
          await sleep(RETRY_START_MS);
        }
      }
    }
  }

  private async until(check: () => boolean): Promise<void> {
    while (!check()) await sleep(100);
  }
}
