import { ServerRMQ } from '@nestjs/microservices';

/** The part of an amqplib channel the set-up watches. */
interface ConsumingChannel {
  consume(...args: unknown[]): Promise<unknown>;
}

/**
 * The charge consumer's RMQ server: Nest's `ServerRMQ`, with a channel
 * set-up that ends as one piece, whatever ends the channel under it.
 *
 * Upstream, `ServerRMQ#setupChannel` (`@nestjs/microservices` 12.1) awaits
 * the queue's declaration and the prefetch but starts `basic.consume`
 * without awaiting it, and calls back (resolving `startAllMicroservices`)
 * before the broker has answered. When the connection ends while that
 * answer is due (a broker restart, a network cut, a shutdown, right after a
 * connect or a reconnect), amqplib rejects it ("Channel ended, no reply
 * will be forthcoming") and no one handles the rejection. A declaration or
 * prefetch cut the same way fails the set-up, which amqp-connection-manager
 * reports as an `error` event on a channel wrapper that has no listener for
 * it: thrown, and unhandled too. An unhandled rejection ends a Node
 * process: payments would stop for a lost connection it reconnects from.
 *
 * The channel itself is opened the same way: a connection closed (by a
 * shutdown) while amqp-connection-manager opens it is an `error` event on
 * the wrapper, unheard.
 *
 * Here the subscription is awaited with the rest, and the callback waits
 * for it: the app is up once it consumes; the wrapper's `error` events are
 * heard. A set-up cut short by its
 * channel's end is logged and left to the connection manager, which sets
 * up the next channel when it reconnects. One the broker refuses (a reply
 * code: the queue declared otherwise, another exclusive consumer) fails the
 * boot with the broker's reason when it is the first; a later one is logged
 * as an error. amqplib then ends the whole connection (the refused
 * channel's `error` event has no listener, which it takes for a frame
 * error), so `/health` answers 503 and the manager tries again on its
 * reconnect, rather than staying up for a consumer that takes nothing.
 */
export class ChargeConsumerServer extends ServerRMQ {
  /** Fails `listen` (the boot) while it has not called back yet; then undefined. */
  private failListen: ((error: unknown) => void) | undefined;

  override listen(callback: (error?: unknown, ...rest: unknown[]) => void): Promise<void> {
    let pending = true;
    const once = (error?: unknown, ...rest: unknown[]) => {
      if (!pending) return;
      pending = false;
      this.failListen = undefined;
      callback(error, ...rest);
    };
    this.failListen = once;
    return super.listen(once);
  }

  override async start(callback?: (error?: unknown, ...rest: unknown[]) => void): Promise<void> {
    await super.start(callback);
    // After Nest's own listener, which creates the channel wrapper on the first connect: its failures to open
    // a channel, which amqp-connection-manager emits as `error`, are heard here rather than thrown unhandled.
    this.server?.once('connect', () => {
      this.channel?.on('error', (error: unknown) => this.setupFailed(error));
    });
  }

  override async setupChannel(channel: ConsumingChannel, callback: () => void): Promise<void> {
    const subscriptions: Array<Promise<unknown>> = [];
    const consume = channel.consume.bind(channel);
    // This channel only (each connection has a new one); the message path keeps the channel itself.
    channel.consume = (...args: unknown[]) => {
      const subscription = consume(...args);
      // Handled at once, awaited below: a rejection before then is no unhandled one.
      subscription.catch(() => undefined);
      subscriptions.push(subscription);
      return subscription;
    };
    try {
      await super.setupChannel(channel, () => undefined);
      await Promise.all(subscriptions);
    } catch (error) {
      this.setupFailed(error);
      return;
    }
    callback();
  }

  private setupFailed(error: unknown): void {
    // amqplib gives the broker's reply code to a refusal; a channel that merely ended has none.
    const refused = typeof (error as { code?: unknown } | undefined)?.code === 'number';
    if (!refused) {
      this.logger.warn(`the charge consumer's channel ended while it was set up (${String(error)}): set up again on reconnect`);
      return;
    }
    if (this.failListen !== undefined) {
      this.failListen(error);
      return;
    }
    this.logger.error(`the broker refused the charge consumer's channel, tried again on reconnect: ${String(error)}`);
  }
}
