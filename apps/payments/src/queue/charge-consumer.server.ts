import { ServerRMQ, type RmqStatus } from '@nestjs/microservices';

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
 * Here the subscription is awaited with the rest, and the callback waits
 * for it: the app is up once it consumes. A set-up cut short by its
 * channel's end is logged and left to the connection manager, which sets
 * up the next channel when it reconnects. One the broker refuses (a reply
 * code: the queue declared otherwise, another exclusive consumer) is logged
 * as an error and reported as a lost connection, so that `/health` answers
 * 503 rather than up for a consumer that takes nothing.
 */
export class ChargeConsumerServer extends ServerRMQ {
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
    const code = (error as { code?: unknown } | undefined)?.code;
    if (typeof code === 'number') {
      this.logger.error(`the broker refused the charge consumer's channel, nothing is consumed: ${String(error)}`);
      // RmqStatus is a const enum of the types only: its value, spelled as a string.
      this._status$.next('disconnected' as unknown as RmqStatus);
      return;
    }
    this.logger.warn(`the charge consumer's channel ended while it was set up (${String(error)}): set up again on reconnect`);
  }
}
