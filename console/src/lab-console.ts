import { allStores, POLICIES, SERVICES, SETUP, type Lab, type Policy } from '@idempotency-chain/scenarios';
import { Checkout } from './checkout';
import { ConsoleStore } from './console-store';
import { labelsOf, Refusal, type CheckoutRequest } from './checkout-request';
import { faultPlans } from './faults';
import { LabPool, type LabState } from './lab-pool';
import type { Snapshot } from './snapshot';
import { WriteUpPlay } from './write-up-play';

/** The policy whose services start with the console: the write-up's first. */
const FIRST_POLICY: Policy = 'none';

/**
 * The console's state and its actions: the store, one lab per policy, the
 * current checkout (or the write-up being played), one action at a time.
 * Every change is told to the listeners, which push a new snapshot.
 */
export class LabConsole {
  private store?: ConsoleStore;
  private pool?: LabPool;
  private busy?: Snapshot['busy'];
  private activity = 'choosing a store';
  private checkout?: Checkout;
  private writeUp?: WriteUpPlay;
  /** Which of the two the page draws: the last one started. */
  private showing?: 'checkout' | 'write-up';
  private actions = 0;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly log: (line: string) => void) {}

  /** Call `listener` after every change; returns how to stop. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Choose the store, then start the first policy's services. */
  async start(): Promise<void> {
    try {
      this.store = await ConsoleStore.open();
    } catch (error) {
      this.setActivity(`no store: ${(error as Error).message}`);
      throw error;
    }
    this.log(`store: ${this.store.view().note}`);
    this.pool = new LabPool(this.store.env(), {
      event: (policy, event) => {
        if (this.checkout?.policy === policy) this.checkout.record(event);
      },
      restarted: (policy, service, outcome) => {
        const text =
          'ms' in outcome
            ? `${service} exited and was started again in ${outcome.ms} ms`
            : `${service} exited and could not be started again: ${outcome.error}`;
        this.log(`${policy}: ${text}`);
        if (this.checkout?.policy === policy) this.checkout.note(text);
      },
      changed: () => this.changed(),
    });
    this.setActivity('ready');
    await this.prepare(FIRST_POLICY);
    this.log(`services under ${FIRST_POLICY} ready`);
  }

  /** Start `policy`'s services now, so that its first press does not wait for them. */
  async prepare(policy: Policy): Promise<LabState> {
    const pool = this.started();
    await pool.lab(policy).catch(() => undefined);
    return pool.states()[policy];
  }

  /** Start a checkout action; refused while another action runs. Returns the action's number. */
  startCheckout(request: CheckoutRequest): number {
    this.claim('checkout', (store) => {
      if (request.mode === 'again' && !this.checkout) throw new Refusal(409, 'there is no order to press again for: press Pay first');
      const outage = store.view().outageUnavailable;
      if (request.faults.storeDown && outage) throw new Refusal(409, `"store down" is not available: ${outage}`);
    });
    const action = ++this.actions;
    void this.runCheckout(request, action)
      .catch((error: Error) => {
        this.checkout?.note(`failed: ${error.message}`);
        if (this.checkout) this.checkout.phase = 'failed';
        this.setActivity(`the checkout failed: ${error.message}`);
      })
      .finally(() => this.release());
    return action;
  }

  /** Play the write-up; refused while another action runs. Returns the number of its first action. */
  playWriteUp(): number {
    const store = this.claim('write-up');
    const first = this.actions + 1;
    const play = new WriteUpPlay(
      store.choice,
      () => ++this.actions,
      () => this.changed(),
    );
    this.writeUp = play;
    this.showing = 'write-up';
    this.setActivity('playing the write-up: one press under each policy, a fresh lab for each');
    void play
      .play()
      .then(() =>
        this.setActivity(
          `the write-up is done: ${play
            .table()
            .rows.map((row) => row.charges)
            .join(' / ')} charges`,
        ),
      )
      .catch((error: Error) => this.setActivity(`the write-up failed: ${error.message}`))
      .finally(() => this.release());
    return first;
  }

  snapshot(): Snapshot {
    const current = this.showing === 'write-up' ? this.writeUp?.view() : this.checkout?.view();
    return {
      ...(this.store && { store: this.store.view() }),
      labs: this.pool?.states() ?? (Object.fromEntries(POLICIES.map((p) => [p, { state: 'stopped' }])) as Snapshot['labs']),
      ...(this.busy && { busy: this.busy }),
      activity: this.activity,
      ...(current && { current }),
      ...(this.writeUp && { writeUp: this.writeUp.table() }),
    };
  }

  async close(): Promise<void> {
    await this.pool?.close();
    await this.store?.close();
  }

  private async runCheckout(request: CheckoutRequest, action: number): Promise<void> {
    const policy = request.mode === 'again' ? (this.checkout as Checkout).policy : request.policy;
    const pool = this.started();
    if (pool.states()[policy].state !== 'ready')
      this.setActivity(`starting the services under ${policy} (a policy's first press waits for them)`);
    const lab = await pool.lab(policy);
    const storeChanged = await this.applyStore(request.faults.storeDown, lab);
    const plans = faultPlans(request.faults);
    await Promise.all(SERVICES.map((service) => lab.arm(service, plans[service])));
    if (request.mode !== 'again') this.checkout = new Checkout(policy, lab, () => this.changed());
    const checkout = this.checkout as Checkout;
    this.showing = 'checkout';
    const labels = labelsOf(request);
    if (request.faults.storeDown)
      checkout.note(`${labels[0]}: the idempotency store is down; every hop that needs it fails closed (503) before running anything`);
    else if (storeChanged) checkout.note(`${labels[0]}: the idempotency store is up again`);
    this.setActivity(`${labels.length > 1 ? `${labels.length} clicks` : labels[0]} under ${policy}, then settling`);
    await checkout.press(action, labels, request.faults.slowFirstAttempt ? SETUP.slowFirstAttemptMs : 0, () => pool.settled(policy));
    this.setActivity(`settled: ${checkout.chargeCount} charge${checkout.chargeCount === 1 ? '' : 's'} under ${policy}`);
  }

  /** Stop or start the records' store as asked, and wait until this lab's services report it so; true when it changed. */
  private async applyStore(down: boolean, lab: Lab): Promise<boolean> {
    const changed = await (this.store as ConsoleStore).setDown(down);
    if (changed) this.setActivity(down ? 'stopping the idempotency store' : 'starting the idempotency store again');
    await allStores(lab, !down);
    return changed;
  }

  /** Take the one action slot once `check` has nothing against it, or refuse. */
  private claim(what: NonNullable<Snapshot['busy']>, check: (store: ConsoleStore) => void = () => undefined): ConsoleStore {
    this.started();
    const store = this.store as ConsoleStore;
    if (this.busy) throw new Refusal(409, `busy: ${this.activity}`);
    check(store);
    this.busy = what;
    this.changed();
    return store;
  }

  private release(): void {
    this.busy = undefined;
    this.changed();
  }

  private started(): LabPool {
    if (!this.pool) throw new Refusal(503, `the console is still starting (${this.activity})`);
    return this.pool;
  }

  private setActivity(text: string): void {
    this.activity = text;
    this.changed();
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}
