import type { Cluster, Redis } from 'ioredis';
import { closeConnection, openConnection } from './redis-client';

type Listener = () => void;
type Subscriber = Redis | Cluster;

/**
 * Which pub/sub the completion signal travels on.
 * - `classic`: PUBLISH/SUBSCRIBE. On a single Redis the natural choice (any
 *   version); on a Cluster every message is broadcast over the cluster bus
 *   to every node, which stops scaling as the cluster grows.
 * - `sharded`: SPUBLISH/SSUBSCRIBE (Redis 7.0+). A channel belongs to the
 *   slot of its name, so the message stays on the shard that owns the
 *   record (master and its replicas), and subscribers connect to that shard.
 *
 * @public
 */
export type PubSubMode = 'classic' | 'sharded';

/** One subscriber and what was subscribed on it. */
interface Connection {
  readonly subscriber: Subscriber;
  /** Each channel's SUBSCRIBE, settling with its reply. */
  readonly subscriptions: Map<string, Promise<unknown>>;
  /** Resolves once `subscriber` is ready; renewed after each close, shared so commands keep their order. */
  readiness?: Promise<Subscriber>;
  /** Whether it has been ready since it last closed. */
  live: boolean;
}

/**
 * One subscriber connection shared by every waiter of a store, with the
 * subscriptions counted per channel: the first waiter on a channel sends
 * SUBSCRIBE, later ones share its reply, and the last to leave sends
 * UNSUBSCRIBE. A hundred requests waiting on one key cost one subscription,
 * and a busy service never holds one connection per waiter.
 *
 * Every command waits for the same readiness of the same subscriber, so
 * they reach Redis in the order they were asked for: a SUBSCRIBE that
 * follows an UNSUBSCRIBE leaves the channel subscribed, never the reverse.
 *
 * When a subscriber that was ready loses its connection, every waiter is
 * woken to look at its record again: a message published meanwhile is
 * lost, but the holder may well be alive and about to complete. A waiter
 * that finds the key still held joins again once a subscriber is ready; a
 * subscriber that cannot get ready fails the waiters that join it. A
 * single `Redis` subscriber is made without reconnection (see
 * `RedisStore`): its subscriptions end with its connection and the next
 * waiter opens a new one, so a channel left during an outage is never
 * subscribed again.
 */
export class CompletionChannels {
  private current: Connection | undefined;
  private readonly listeners = new Map<string, Set<Listener>>();
  private closed = false;

  /**
   * `connect` creates the (not yet connected) subscriber on first use: a
   * `Redis` connection that does not reconnect, or for sharded pub/sub on a
   * Cluster a `Cluster` with `shardedSubscribers`, which keeps one
   * subscriber per master, routes each SSUBSCRIBE to the shard that owns
   * the channel's slot, and subscribes again after a failover.
   */
  constructor(
    private readonly connect: () => Subscriber,
    private readonly mode: PubSubMode = 'classic',
  ) {}

  /**
   * Call `listener` on every message on `channel` until {@link leave}, and
   * when the subscriber's connection is lost. Resolves once the channel is
   * subscribed: a completion published after that is delivered. Rejects,
   * and leaves, when the subscription fails.
   */
  join(channel: string, listener: Listener): Promise<void> {
    if (this.closed) return Promise.reject(new Error('The completion subscriber is closed'));
    const listeners = this.listeners.get(channel) ?? new Set<Listener>();
    this.listeners.set(channel, listeners);
    listeners.add(listener);
    const connection = this.connection();
    let subscribed = connection.subscriptions.get(channel);
    if (!subscribed) {
      const attempt = ready(connection).then((subscriber) =>
        this.mode === 'sharded' ? subscriber.ssubscribe(channel) : subscriber.subscribe(channel),
      );
      // A failed SUBSCRIBE is forgotten so that the next waiter tries again.
      attempt.catch(() => {
        if (connection.subscriptions.get(channel) === attempt) connection.subscriptions.delete(channel);
      });
      connection.subscriptions.set(channel, attempt);
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
    const connection = this.current;
    if (!connection?.subscriptions.delete(channel)) return;
    // Queued behind the SUBSCRIBE on the same subscriber. A failed
    // UNSUBSCRIBE means its connection is down, and its subscriptions with it.
    ready(connection)
      .then((subscriber) => (this.mode === 'sharded' ? subscriber.sunsubscribe(channel) : subscriber.unsubscribe(channel)))
      .catch(() => undefined);
  }

  /** Drop every listener and close the subscriber connection. */
  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    const connection = this.current;
    this.current = undefined;
    if (connection) await closeConnection(connection.subscriber);
  }

  /** The current subscriber, created on first use and after the last one ended. */
  private connection(): Connection {
    // An ended subscriber's `end` event may still be on its way.
    if (this.current && this.current.subscriber.status !== 'end') return this.current;
    const subscriber = this.connect();
    const connection: Connection = { subscriber, subscriptions: new Map(), live: false };
    // Failures reach waiters as rejected SUBSCRIBEs; the connection's own
    // error events would only be console noise.
    subscriber.on('error', () => undefined);
    subscriber.on(this.mode === 'sharded' ? 'smessage' : 'message', (channel: string) => this.dispatch(channel));
    subscriber.on('ready', () => (connection.live = true));
    subscriber.on('close', () => {
      // Commands wait for the next `ready` from now on.
      connection.readiness = undefined;
      const lost = connection.live;
      connection.live = false;
      if (lost) this.wakeAll();
    });
    // Ended (a single subscriber, which does not reconnect): its
    // subscriptions are gone with it; the next waiter opens a new one.
    subscriber.on('end', () => {
      if (this.current === connection) this.current = undefined;
    });
    // A shard's subscriber went away (a failover, a topology change, a cut
    // connection): ioredis subscribes its channels again on the shard's
    // owner, but a message published in between is lost.
    if (this.mode === 'sharded') subscriber.on('-node', () => this.wakeAll());
    this.current = connection;
    return connection;
  }

  /** Wake every waiter to look at its record again. */
  private wakeAll(): void {
    for (const listeners of [...this.listeners.values()]) for (const listener of [...listeners]) listener();
  }

  private dispatch(channel: string): void {
    for (const listener of [...(this.listeners.get(channel) ?? [])]) listener();
  }
}

/** The connection's subscriber once ready; a failed attempt is forgotten so that the next command tries again. */
function ready(connection: Connection): Promise<Subscriber> {
  if (!connection.readiness) {
    const readiness = untilReady(connection.subscriber);
    readiness.catch(() => {
      if (connection.readiness === readiness) connection.readiness = undefined;
    });
    connection.readiness = readiness;
  }
  return connection.readiness;
}

/**
 * Resolve once `subscriber` is ready: connect it on first use (rejecting
 * when Redis is unreachable), or wait for its reconnection, rejecting when
 * that attempt fails (its connection closes again, or ends).
 */
function untilReady(subscriber: Subscriber): Promise<Subscriber> {
  if (subscriber.status === 'ready') return Promise.resolve(subscriber);
  if (subscriber.status === 'wait') return openConnection(subscriber).then(() => subscriber);
  if (subscriber.status === 'end') return Promise.reject(new Error('The completion subscriber has ended'));
  return new Promise((resolve, reject) => {
    const settle = (isReady: boolean): void => {
      subscriber.off('ready', onReady);
      subscriber.off('close', onClose);
      subscriber.off('end', onClose);
      if (isReady) resolve(subscriber);
      else reject(new Error('The completion subscriber could not reconnect'));
    };
    const onReady = (): void => settle(true);
    const onClose = (): void => settle(false);
    subscriber.once('ready', onReady);
    subscriber.once('close', onClose);
    subscriber.once('end', onClose);
  });
}
