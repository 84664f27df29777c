import { chooseStore, PrivateRedis, privateRedisUnavailable, type StoreChoice } from '@idempotency-chain/scenarios';

/** The store as the page shows it. */
export interface StoreView {
  kind: 'redis' | 'memory';
  /** Where the ledger and the records live, in a sentence. */
  note: string;
  /** The records' store is stopped ("store down"). */
  down: boolean;
  /** Why "store down" cannot be offered here; absent when it can. */
  outageUnavailable?: string;
}

/**
 * The console's stores. The ledger (and the write-up's runs) use the store
 * the scenario runner would choose: the Redis at `REDIS_URL`, else a
 * `redis-server` of its own, else memory. The services' idempotency records
 * go to a `redis-server` the console owns when it can start one, so that
 * "store down" can stop it without touching anyone else's Redis, while the
 * ledger stays up to be counted (as in the store-outage scenario).
 */
export class ConsoleStore {
  private constructor(
    readonly choice: StoreChoice,
    private readonly records: PrivateRedis | undefined,
    private readonly outageUnavailable: string | undefined,
  ) {}

  static async open(): Promise<ConsoleStore> {
    const choice = await chooseStore();
    if (choice.store === 'memory')
      return new ConsoleStore(choice, undefined, 'the services run on in-memory stores: there is no Redis to stop');
    const missing = privateRedisUnavailable();
    if (missing)
      return new ConsoleStore(choice, undefined, `the records share the ledger's Redis, which the console will not stop (${missing})`);
    try {
      return new ConsoleStore(choice, await PrivateRedis.start(), undefined);
    } catch (error) {
      await choice.stop();
      throw error;
    }
  }

  /** The services' store variables: records in the console's Redis when it has one, the ledger in the chosen store. */
  env(): Record<string, string> {
    if (this.choice.store === 'memory') return { IDEMPOTENCY_STORE: 'memory' };
    const ledger = this.choice.redisUrl as string;
    return { IDEMPOTENCY_STORE: 'redis', REDIS_URL: this.records?.url ?? ledger, LEDGER_REDIS_URL: ledger };
  }

  get down(): boolean {
    return this.records !== undefined && !this.records.running;
  }

  /** Stop or start the records' Redis; true when that changed anything. */
  async setDown(down: boolean): Promise<boolean> {
    if (down === this.down) return false;
    if (!this.records) throw new Error(`"store down" is not available: ${this.outageUnavailable}`);
    await (down ? this.records.stop() : this.records.start());
    return true;
  }

  view(): StoreView {
    const records = this.records ? `records in a redis-server of the console's own (${this.records.url})` : 'records beside it';
    const note = this.choice.store === 'memory' ? this.choice.note : `ledger on ${this.choice.note}; ${records}`;
    return { kind: this.choice.store, note, down: this.down, ...(this.outageUnavailable && { outageUnavailable: this.outageUnavailable }) };
  }

  async close(): Promise<void> {
    await this.records?.stop();
    await this.choice.stop();
  }
}
