import { budgets, Lab, POLICIES, SERVICES, type LabEvent, type Policy, type Service } from '@idempotency-chain/scenarios';

/** Where one policy's services are. */
export type LabState = { state: 'stopped' | 'starting' | 'ready' } | { state: 'failed'; error: string };

/** What the pool tells its owner. */
export interface LabPoolListener {
  /** An event of `policy`'s lab, as it is recorded. */
  event(policy: Policy, event: LabEvent): void;
  /** A service exited on its own (e.g. the crash fault) and was started again, or could not be. */
  restarted(policy: Policy, service: Service, outcome: { ms: number } | { error: string }): void;
  /** A lab's state changed. */
  changed(): void;
}

/**
 * One lab per key policy (`KEY_POLICY` is read when a service starts), each
 * started the first time it is asked for and kept, so switching back is
 * instant. Like a process supervisor, the pool starts again any service
 * that exits on its own.
 */
export class LabPool {
  private readonly labs = new Map<Policy, { lab: Lab; ready: Promise<Lab>; state: LabState }>();
  private readonly restarting = new Map<Policy, Promise<void>>();
  private closing = false;

  constructor(
    private readonly env: Record<string, string>,
    private readonly listener: LabPoolListener,
  ) {}

  /** Each policy's state, for the page. */
  states(): Record<Policy, LabState> {
    return Object.fromEntries(POLICIES.map((policy) => [policy, this.labs.get(policy)?.state ?? { state: 'stopped' }])) as Record<
      Policy,
      LabState
    >;
  }

  /** `policy`'s lab once it answers (started now if it was not); rejects if it cannot start. */
  lab(policy: Policy): Promise<Lab> {
    const known = this.labs.get(policy);
    if (known && known.state.state !== 'failed') return known.ready;
    // A lab that failed may still run some of its services: they go before a new lab starts.
    const stopped = known ? known.lab.stop() : Promise.resolve();
    const lab = new Lab({
      env: { ...this.env, KEY_POLICY: policy, LOG_LEVEL: 'info' },
      perService: budgets(),
      onEvent: (event) => this.listener.event(policy, event),
    });
    const entry = { lab, ready: stopped.then(() => this.start(policy, lab)), state: { state: 'starting' } as LabState };
    this.labs.set(policy, entry);
    this.listener.changed();
    return entry.ready;
  }

  /** Resolves once no service of `policy`'s lab is being started again. */
  async settled(policy: Policy): Promise<void> {
    await this.restarting.get(policy);
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.labs.values()].map(({ lab }) => lab.stop()));
  }

  private async start(policy: Policy, lab: Lab): Promise<Lab> {
    try {
      await lab.start();
      this.setState(policy, { state: 'ready' });
      for (const service of SERVICES) this.supervise(policy, lab, service);
      return lab;
    } catch (error) {
      this.setState(policy, { state: 'failed', error: (error as Error).message });
      throw error;
    }
  }

  private supervise(policy: Policy, lab: Lab, service: Service): void {
    void lab.exited(service).then(() => {
      if (this.closing) return;
      const from = Date.now();
      const restart = lab.startService(service).then(
        () => {
          this.listener.restarted(policy, service, { ms: Date.now() - from });
          this.supervise(policy, lab, service);
        },
        (error: Error) => {
          this.listener.restarted(policy, service, { error: error.message });
          this.setState(policy, { state: 'failed', error: `${service} could not be started again: ${error.message}` });
        },
      );
      this.restarting.set(policy, restart);
    });
  }

  private setState(policy: Policy, state: LabState): void {
    const entry = this.labs.get(policy);
    if (entry) entry.state = state;
    this.listener.changed();
  }
}
