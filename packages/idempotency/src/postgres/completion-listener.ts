import type { Client, Notification } from 'pg';

type Listener = () => void;

/**
 * One dedicated connection that LISTENs on the store's channel, shared by
 * every waiter of a store: completion and release `pg_notify` the store key,
 * and the listener wakes the waiters of that key. A hundred waiters cost one
 * connection and one LISTEN, whatever the number of keys.
 *
 * When the connection fails, every current waiter is woken (it claims again
 * and learns the state from the database) and the next waiter connects anew:
 * a waiter can miss no notification, because it re-reads the record after
 * {@link join} resolves, and `join` resolves only once LISTEN is in force.
 */
export class CompletionListener {
  private connection: Promise<Client> | undefined;
  private readonly listeners = new Map<string, Set<Listener>>();
  private closed = false;

  /** `connect` creates the (not yet connected) client; `channel` is the quoted channel name. */
  constructor(
    private readonly connect: () => Client,
    private readonly channel: string,
  ) {}

  /** Call `listener` on the next notification for `recordKey`; resolves once LISTEN is in force. */
  async join(recordKey: string, listener: Listener): Promise<void> {
    const listeners = this.listeners.get(recordKey) ?? new Set<Listener>();
    this.listeners.set(recordKey, listeners);
    listeners.add(listener);
    try {
      await this.listening();
    } catch (error) {
      this.leave(recordKey, listener);
      throw error;
    }
  }

  leave(recordKey: string, listener: Listener): void {
    const listeners = this.listeners.get(recordKey);
    if (listeners?.delete(listener) && listeners.size === 0) this.listeners.delete(recordKey);
  }

  /** Wake every waiter and end the connection. */
  async close(): Promise<void> {
    this.closed = true;
    this.wakeAll();
    const connection = this.connection;
    this.connection = undefined;
    const client = await connection?.catch(() => undefined);
    await client?.end().catch(() => undefined);
  }

  private listening(): Promise<Client> {
    if (this.closed) return Promise.reject(new Error('The completion listener is closed'));
    if (!this.connection) {
      const connection: Promise<Client> = this.open(() => {
        // Only the connection in use may reset the state; a stale one's late events are ignored.
        if (this.connection !== connection) return;
        this.connection = undefined;
        this.wakeAll();
      });
      // A failed connect is forgotten, so the next waiter tries again.
      connection.catch(() => {
        if (this.connection === connection) this.connection = undefined;
      });
      this.connection = connection;
    }
    return this.connection;
  }

  private async open(onLost: () => void): Promise<Client> {
    const client = this.connect();
    const lost = () => {
      onLost();
      client.end().catch(() => undefined);
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message: Notification) => this.dispatch(message.payload));
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
    } catch (error) {
      client.end().catch(() => undefined);
      throw error;
    }
    return client;
  }

  private dispatch(recordKey: string | undefined): void {
    for (const listener of [...(this.listeners.get(recordKey ?? '') ?? [])]) listener();
  }

  private wakeAll(): void {
    for (const listeners of [...this.listeners.values()]) for (const listener of [...listeners]) listener();
  }
}
