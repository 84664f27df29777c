import { connect as amqpConnect, type ChannelModel, type PublishOptions } from 'amqplib';
import { BasicAck, BasicDeliver, BasicNack, BasicReject, ChannelClose, ChannelCloseOk } from 'amqplib/lib/defs';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { connect as tcpConnect, createServer, type Server, type Socket } from 'node:net';
import { keyHash, type AttemptOutcome } from '../proxy/attempt';
import type { AttemptLog } from '../proxy/attempt-log';
import { FrameReader, type ChunkFrame, type Frame } from './frames';
import { QueueDeliveries, type HeldDelivery } from './queue-deliveries';
import type { QueuePlan } from './queue-faults';

/** Where the queue proxy listens, where the broker is, and what it reads. */
export interface AmqpProxyOptions {
  /** The queue hop's name in reports. */
  name: string;
  host: string;
  port: number;
  /** The broker's `amqp://` URL: the consumer's connections go on to its host and port; copies are published with it. */
  broker: string;
  /** The queue the consumer reads: copies are published into it, its ready messages hold the chain unsettled. */
  queue: string;
  /** The message header the idempotency key travels in (hashed in reports). */
  keyHeader: string;
  log: AttemptLog;
}

/** A delivery the consumer holds: its attempt, its faults, and the message, to publish a copy of. */
interface Held extends HeldDelivery {
  /** Which opening of its channel number it came on: a closed channel's number and tags are used again. */
  generation: number;
  body: Buffer;
  properties: PublishOptions;
}

/** A delivery being read: its method frame came, its content header and body may not have yet. */
interface Incoming {
  tag: number;
  redelivered: boolean;
  routingKey: string;
  properties?: PublishOptions;
  size?: number;
  body: Buffer[];
}

/** What the proxy reads of one consumer connection: its deliveries being read and held, per channel. */
interface ConnectionState {
  /** Deliveries being read, by channel. */
  incoming: Map<number, Incoming>;
  /** Deliveries the consumer holds, by channel, its generation and the delivery tag. */
  open: Map<string, Held>;
  /** How many times each channel number has closed on this connection. */
  generations: Map<number, number>;
}

/** The consumer's settlement of one or more deliveries, from an ack, a nack or a reject frame. */
interface Settlement {
  channel: number;
  tag: number;
  multiple: boolean;
  outcome: AttemptOutcome;
}

/** amqplib's publish options that a decoded content header carries under the same names. */
const PROPERTIES = [
  'contentType',
  'contentEncoding',
  'headers',
  'deliveryMode',
  'priority',
  'correlationId',
  'replyTo',
  'expiration',
  'messageId',
  'timestamp',
  'type',
  'userId',
  'appId',
] as const;

/**
 * A TCP proxy on the consumer's AMQP 0-9-1 connection: the consumer connects to it
 * instead of the broker, and every byte goes on unchanged. It reads both directions
 * with amqplib's frame codec, so it sees each delivery (tag, redelivered flag, the
 * message's key header) and the consumer's ack, nack or reject of it, and logs each
 * delivery as an attempt at the queue hop: open while the consumer holds it, ended by
 * its settlement. Its faults act where only the consumer's connection can: cutting it
 * when an ack arrives (the broker never gets the ack and redelivers), holding the ack
 * while the consumer is killed, and publishing copies of a delivered message into the
 * queue (with its own connection to the broker, straight to the queue).
 */
export class AmqpProxy {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly deliveries: QueueDeliveries;
  private connection: ChannelModel | undefined;
  /** RabbitMQ drops nothing unanswered by itself: a message dead-lettered is one the consumer rejected. */
  readonly dropped: string[] = [];

  constructor(private readonly options: AmqpProxyOptions) {
    this.server = createServer((client) => this.accept(client));
    this.deliveries = new QueueDeliveries(options.name, options.log);
  }

  /** What went wrong in the proxy during the scenario (a copy not published): reported as its error. */
  get problems(): string[] {
    return this.deliveries.problems;
  }

  async start(): Promise<void> {
    this.server.listen(this.options.port, this.options.host);
    await once(this.server, 'listening');
    this.connection = await amqpConnect(this.options.broker);
    // A broker that drops the verifier's own connection is reported when a copy or a check needs it.
    this.connection.on('error', () => undefined);
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await this.connection?.close().catch(() => undefined);
  }

  /** Faults per delivery number for the scenario that starts; deliveries are counted from 1 again. */
  setPlan(plan: QueuePlan): void {
    this.deliveries.setPlan(plan);
  }

  /**
   * Messages that may still reach the consumer: ready in its queue, or copies being
   * published. The chain has not settled while any is.
   */
  async waiting(): Promise<number> {
    if (!this.connection) throw new Error(`queue hop ${this.options.name}: not started`);
    // A channel of its own: a check of a queue that does not exist closes the channel it ran on.
    const channel = await this.connection.createChannel();
    try {
      const { messageCount } = await channel.checkQueue(this.options.queue);
      return messageCount + this.deliveries.publishing;
    } catch (error) {
      throw new Error(
        `queue hop ${this.options.name}: the broker cannot check queue "${this.options.queue}": ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  private accept(client: Socket): void {
    const target = new URL(this.options.broker);
    const broker = tcpConnect({ host: target.hostname, port: Number(target.port || 5672) });
    this.sockets.add(client).add(broker);
    const fromClient = new FrameReader(true);
    const fromBroker = new FrameReader(false);
    const state: ConnectionState = { incoming: new Map(), open: new Map(), generations: new Map() };
    const { open } = state;
    let cut = false;
    const close = () => {
      client.destroy();
      broker.destroy();
      this.sockets.delete(client);
      this.sockets.delete(broker);
      for (const held of open.values()) this.deliveries.end(held, 'unsettled');
      open.clear();
    };
    client.on('close', close).on('error', close);
    broker.on('close', close).on('error', close);
    broker.on('data', (chunk: Buffer) => {
      if (cut) return;
      try {
        for (const { frame } of fromBroker.push(chunk)) this.fromBroker(frame, state);
      } catch (error) {
        this.problems.push(`queue hop ${this.options.name}: unreadable frame from the broker: ${(error as Error).message}`);
      }
      client.write(chunk);
    });
    client.on('data', (chunk: Buffer) => {
      if (cut) return;
      let frames: ChunkFrame[];
      try {
        frames = fromClient.push(chunk);
      } catch (error) {
        this.problems.push(`queue hop ${this.options.name}: unreadable frame from the consumer: ${(error as Error).message}`);
        frames = [];
      }
      const copies: Held[] = [];
      // Frame by frame: what the consumer wrote before a faulted ack (its effect's publish, a reply) goes on.
      for (const { frame, start } of frames) {
        if (closesChannel(frame)) this.closeChannel(state, frame.channel);
        const s = settlementOf(frame);
        if (!s) continue;
        const settled = [...open.entries()].filter(([, held]) => settles(s, held, generationOf(state, s.channel)));
        const faulted = this.deliveries.faulted(settled.map(([, held]) => held));
        if (faulted) {
          broker.write(chunk.subarray(0, start));
          cut = true;
          for (const [id, held] of settled) if (held === faulted) open.delete(id);
          this.deliveries.withhold(faulted, client, close);
          return;
        }
        for (const [id, held] of settled) {
          open.delete(id);
          this.deliveries.end(held, s.outcome);
          if (s.outcome === 'acked' && this.deliveries.copied(held)) copies.push(held);
        }
      }
      broker.write(chunk);
      for (const held of copies) this.publishCopy(held);
    });
  }

  /** Reads a frame the broker sent the consumer: a delivery is logged once its whole message came. */
  private fromBroker(frame: Frame, state: ConnectionState): void {
    const { channel } = frame;
    const { incoming } = state;
    if (closesChannel(frame)) {
      this.closeChannel(state, channel);
      return;
    }
    if (frame.id === BasicDeliver && frame.size === undefined && frame.fields) {
      const { deliveryTag, redelivered, routingKey } = frame.fields as { deliveryTag: number; redelivered: boolean; routingKey: string };
      incoming.set(channel, { tag: deliveryTag, redelivered, routingKey, body: [] });
      return;
    }
    const delivery = incoming.get(channel);
    if (!delivery) return;
    if (frame.size !== undefined) {
      delivery.size = frame.size;
      delivery.properties = publishOptions(frame.fields ?? {});
    } else if (frame.content) {
      delivery.body.push(frame.content);
    }
    const received = delivery.body.reduce((sum, part) => sum + part.length, 0);
    if (delivery.size === undefined || received < delivery.size) return;
    incoming.delete(channel);
    this.delivered(channel, delivery, Buffer.concat(delivery.body), state);
  }

  /**
   * Ends the deliveries a closing channel holds (RabbitMQ requeues what a closed channel
   * held unsettled) and forgets it, so a channel opened again with its number, whose
   * tags count from 1 again, is read as new. Read in both directions: either side may
   * close a channel (the broker does on a channel error, such as an unknown tag acked).
   */
  private closeChannel(state: ConnectionState, channel: number): void {
    for (const [id, held] of state.open) {
      if (held.attempt.delivery?.channel !== channel) continue;
      state.open.delete(id);
      this.deliveries.end(held, 'requeued');
    }
    state.incoming.delete(channel);
    state.generations.set(channel, generationOf(state, channel) + 1);
  }

  private delivered(channel: number, delivery: Incoming, body: Buffer, state: ConnectionState): void {
    const properties = delivery.properties ?? {};
    const key = properties.headers?.[this.options.keyHeader];
    const { attempt, faults } = this.deliveries.begin({
      delivery: { tag: delivery.tag, channel, redelivered: delivery.redelivered },
      path: delivery.routingKey,
      keyHash: keyHash(Buffer.isBuffer(key) ? key.toString('utf8') : typeof key === 'string' ? key : undefined),
      message: bodyHash(body),
    });
    const generation = generationOf(state, channel);
    const held: Held = { attempt, generation, faults, body, properties };
    state.open.set(`${channel}:${generation}:${delivery.tag}`, held);
    // The first copy goes while the consumer still holds the original; the second once it acked it.
    if (this.deliveries.copied(held)) this.publishCopy(held);
  }

  /** Publishes the same message (body and properties) into the consumer's queue, with publisher confirms. */
  private publishCopy(held: Held): void {
    this.deliveries.copy(held, bodyHash(held.body), async () => {
      if (!this.connection) throw new Error('not started');
      const channel = await this.connection.createConfirmChannel();
      try {
        channel.sendToQueue(this.options.queue, held.body, held.properties);
        await channel.waitForConfirms();
      } finally {
        await channel.close().catch(() => undefined);
      }
    });
  }
}

/** A message's identity for telling a copy from another message: its body's hash. */
function bodyHash(body: Buffer): string {
  return createHash('sha256').update(body).digest('hex');
}

/** The settlement an ack, nack or reject frame from the consumer carries; `undefined` for any other frame. */
function settlementOf(frame: Frame): Settlement | undefined {
  const fields = frame.fields as { deliveryTag: number; multiple?: boolean; requeue?: boolean } | undefined;
  if (!fields || frame.size !== undefined) return undefined;
  const base = { channel: frame.channel, tag: fields.deliveryTag };
  if (frame.id === BasicAck) return { ...base, multiple: Boolean(fields.multiple), outcome: 'acked' };
  if (frame.id === BasicNack) return { ...base, multiple: Boolean(fields.multiple), outcome: fields.requeue ? 'requeued' : 'rejected' };
  if (frame.id === BasicReject) return { ...base, multiple: false, outcome: fields.requeue ? 'requeued' : 'rejected' };
  return undefined;
}

/** How many times a channel number has closed on a connection: the generation a delivery on it now belongs to. */
function generationOf(state: ConnectionState, channel: number): number {
  return state.generations.get(channel) ?? 0;
}

/** Whether a frame closes its channel: channel.close, or channel.close-ok answering the other side's. */
function closesChannel(frame: Frame): boolean {
  return frame.size === undefined && (frame.id === ChannelClose || frame.id === ChannelCloseOk);
}

/**
 * Whether a settlement covers a held delivery: one on the settlement's channel as now
 * open (`generation`), with its tag or (`multiple`) any tag up to it, 0 meaning all.
 */
function settles(s: Settlement, held: Held, generation: number): boolean {
  const delivery = held.attempt.delivery;
  if (!delivery || delivery.channel !== s.channel || held.generation !== generation) return false;
  return s.multiple ? s.tag === 0 || delivery.tag <= s.tag : delivery.tag === s.tag;
}

/** A decoded content header as amqplib's publish options, absent properties left out. */
function publishOptions(fields: Record<string, unknown>): PublishOptions {
  return Object.fromEntries(PROPERTIES.flatMap((name) => (fields[name] === undefined ? [] : [[name, fields[name]]])));
}
