import type { Cluster, Redis } from 'ioredis';
import { closeConnection } from './redis-client';

type Listener = (lost?: Error) => void;

/**
 * Which pub/sub the completion signal travels on.
 * - `classic`: PUBLISH/SUBSCRIBE. On a single Redis the natural choice (any
 *   version); on a Cluster every message is broadcast over the cluster bus
 *   to every node, which stops scaling as the cluster grows.
 * - `sharded`: SPUBLISH/SSUBSCRIBE (Redis 7.0+). A channel belongs to the
 *   slot of its name, so the message stays on the shard that owns the
 *   record (master and its replicas), and subscribers connect to that shard.
 */
export type PubSubMode = 'classic' | 'sharded';

/**
 * One subscriber connection shared by every waiter of a store, with the
 * subscriptions counted per channel: the first waiter on a channel sends
 * SUBSCRIBE, later ones share its reply, and the last to leave sends
 * UNSUBSCRIBE. A hundred requests waiting on one key cost one subscription,
 * and a busy service never holds one connection per waiter.
 *
 * Commands on one connection are answered in order, so a SUBSCRIBE that
 * follows an UNSUBSCRIBE still in flight leaves the channel subscribed.
 */
export class CompletionChannels {
  private subscriber: Redis | Cluster | undefined;
  private connecting: Promise<void> | undefined;
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly subscriptions = new Map<string, Promise<unknown>>();
  private closed = false;

  /**
   * `connect` creates the (not yet connected) subscriber on first use: a
   * `Redis` connection, or for sharded pub/sub on a Cluster a `Cluster` with
   * `shardedSubscribers`, which keeps one subscriber per master and routes
   * each SSUBSCRIBE to the shard that owns the channel's slot.
   */
  constructor(
    private readonly connect: () => Redis | Cluster,
    private readonly mode: PubSubMode = 'classic',
  ) {}

  /**
   * Call `listener` on every message on `channel` until {@link leave}.
   * Resolves once the channel is subscribed: a completion published after
   * that is delivered. Rejects, and leaves, when the subscription fails.
   */
  join(channel: string, listener: Listener): Promise<void> {
    const listeners = this.listeners.get(channel) ?? new Set<Listener>();
    this.listeners.set(channel, listeners);
    listeners.add(listener);
    let subscribed = this.subscriptions.get(channel);
    if (!subscribed) {
      const attempt = this.connection().then((subscriber) =>
        this.mode === 'sharded' ? subscriber.ssubscribe(channel) : subscriber.subscribe(channel),
      );
      // A failed SUBSCRIBE is forgotten so that the next waiter tries again.
      attempt.catch(() => {
        if (this.subscriptions.get(channel) === attempt) this.subscriptions.delete(channel);
      });
      this.subscriptions.set(channel, attempt);
      subscribed = attempt;
    }
    return subscribed.then(
      () => undefined,
      (error: unknown) => {
        this.leave(channel, listener);
        throw error;
      },
    );
  }

  /** Stop calling `listener`; unsubscribe when it was the channel's last. */
  leave(channel: string, listener: Listener): void {
    const listeners = this.listeners.get(channel);
    if (!listeners?.delete(listener) || listeners.size > 0) return;
    this.listeners.delete(channel);
    this.subscriptions.delete(channel);
    if (this.closed || !this.subscriber) return;
    // A failed UNSUBSCRIBE means the connection is down; ioredis may restore
    // the subscription on reconnect, where its messages find no listener.
    const left = this.mode === 'sharded' ? this.subscriber.sunsubscribe(channel) : this.subscriber.unsubscribe(channel);
    left.catch(() => undefined);
  }

  /** Drop every listener and close the subscriber connection. */
  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    this.subscriptions.clear();
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (subscriber) await closeConnection(subscriber);
  }

  private connection(): Promise<Redis | Cluster> {
    if (this.closed) return Promise.reject(new Error('The completion subscriber is closed'));
    let subscriber = this.subscriber;
    if (!subscriber) {
      subscriber = this.connect();
      // Failures reach waiters as rejected SUBSCRIBEs; the connection's own
      // error events would only be console noise.
      subscriber.on('error', () => undefined);
      subscriber.on(this.mode === 'sharded' ? 'smessage' : 'message', (channel: string) => this.dispatch(channel));
      // The signal is gone with the connection: fail every waiter now, rather
      // than wait for a message that cannot come until the next safety poll.
      subscriber.on('close', () => this.wakeAll(new Error('The completion subscriber lost its connection')));
      // A shard's subscriber went away (a failover, a topology change, a cut
      // connection): ioredis subscribes its channels again on the shard's
      // owner, but a message published in between is lost. Every waiter
      // looks at its record again, instead of failing next to a live holder.
      if (this.mode === 'sharded') subscriber.on('-node', () => this.wakeAll());
      this.subscriber = subscriber;
      // A failed first connect surfaces as the SUBSCRIBE's rejection.
      this.connecting = subscriber.connect().catch(() => undefined);
    }
    const ready = subscriber;
    return (this.connecting ?? Promise.resolve()).then(() => ready);
  }

  /** Wake every waiter: to look at its record again, or with `lost` when the signal is gone. */
  private wakeAll(lost?: Error): void {
    for (const listeners of [...this.listeners.values()]) for (const listener of [...listeners]) listener(lost);
  }

  private dispatch(channel: string): void {
    for (const listener of [...(this.listeners.get(channel) ?? [])]) listener();
  }
}
