import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, headers as natsHeaders, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { connect as tcpConnect, createServer, type Server, type Socket } from 'node:net';
import { keyHash, type AttemptOutcome } from '../proxy/attempt';
import type { AttemptLog } from '../proxy/attempt-log';
import { readAckSubject, settlementOf, type AckSubject } from './jetstream-ack';
import { headerValue, NatsFrameReader, type NatsFrame } from './nats-frames';
import { QueueDeliveries, type HeldDelivery } from './queue-deliveries';
import type { QueuePlan } from './queue-faults';
import { UNCOPIED_HEADERS } from './uncopied-headers';

/** Where the NATS proxy listens, where the server is, and which JetStream consumer it reads. */
export interface NatsProxyOptions {
  /** The queue hop's name in reports. */
  name: string;
  host: string;
  port: number;
  /** The server's `nats://` URL: the consumer's connections go on to its host and port; copies are published with it. */
  server: string;
  /** The stream the consumer reads. */
  stream: string;
  /** The JetStream consumer (durable name) the team's consumer pulls from or is pushed by. */
  consumer: string;
  /** The message header the idempotency key travels in (hashed in reports). */
  keyHeader: string;
  log: AttemptLog;
}

/** A delivery the consumer holds: its attempt, its faults, and the message, to publish a copy of. */
interface Held extends HeldDelivery {
  /** The delivery's reply subject, which its ack goes to. */
  reply: string;
  ack: AckSubject;
  subject: string;
  headers: Buffer | undefined;
  payload: Buffer;
}

/** The server's INFO fields the proxy reads. */
interface ServerInfo {
  max_payload?: number;
  tls_required?: boolean;
}

/**
 * A TCP proxy on the consumer's NATS connection, for a JetStream consumer: the
 * consumer connects to it instead of the server, and every byte goes on unchanged. It
 * reads both directions with {@link NatsFrameReader}, so it sees each delivery of the
 * configured stream and consumer (its reply subject carries the stream sequence, the
 * delivery count and the consumer sequence; its headers the key) and the consumer's
 * answer on that subject (`+ACK`, `-NAK`, `+TERM`), and logs each delivery as an attempt
 * at the queue hop. Its faults are those of {@link AmqpProxy}: the connection cut when a
 * faulted ack arrives, the ack held while the consumer is killed, and copies of the
 * message published into the stream (with the verifier's own connection).
 */
export class NatsProxy {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly deliveries: QueueDeliveries;
  private connection: NatsConnection | undefined;
  private manager: JetStreamManager | undefined;
  private advisories: Subscription | undefined;
  /** Whether the consumer's one ack settles every delivery before it too (`ack_policy: all`). */
  private ackAll = false;
  /** Messages JetStream gave up on during the scenario (the consumer's `max_deliver` reached): never handled to the end. */
  dropped: string[] = [];

  constructor(private readonly options: NatsProxyOptions) {
    this.server = createServer((client) => this.accept(client));
    this.deliveries = new QueueDeliveries(options.name, options.log);
  }

  /** What went wrong in the proxy during the scenario (a copy not published, garbage read): reported as its error. */
  get problems(): string[] {
    return this.deliveries.problems;
  }

  async start(): Promise<void> {
    const { name, server, stream, consumer } = this.options;
    this.connection = await connect({ servers: [server], name: `idempotency-verify ${name}` });
    this.manager = await jetstreamManager(this.connection);
    const info = await this.manager.consumers.info(stream, consumer).catch((error: unknown) => {
      throw new Error(`queue hop ${name}: JetStream has no consumer "${consumer}" on stream "${stream}": ${(error as Error).message}`, {
        cause: error,
      });
    });
    if (info.config.ack_policy === 'none') {
      throw new Error(`queue hop ${name}: consumer "${consumer}" acks nothing (ack_policy none): there is no ack to lose or hold`);
    }
    this.ackAll = info.config.ack_policy === 'all';
    this.advisories = this.connection.subscribe(`$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${stream}.${consumer}`, {
      callback: (error, message) => {
        if (error) return;
        let advisory: { stream_seq?: number; deliveries?: number };
        try {
          advisory = message.json();
        } catch {
          advisory = {};
        }
        const { stream_seq: sequence = '?', deliveries = '?' } = advisory;
        this.dropped.push(
          `stream sequence ${sequence} reached max_deliver after ${deliveries} deliveries: JetStream stopped delivering it`,
        );
      },
    });
    this.server.listen(this.options.port, this.options.host);
    await once(this.server, 'listening');
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    if (this.server.listening) await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.advisories?.unsubscribe();
    await this.connection?.close().catch(() => undefined);
  }

  /** Faults per delivery number for the scenario that starts; deliveries are counted from 1 again. */
  setPlan(plan: QueuePlan): void {
    this.deliveries.setPlan(plan);
    this.dropped = [];
  }

  /**
   * Messages that may still reach the consumer or wait for its ack: not yet delivered
   * (`num_pending`), delivered and not acked (`num_ack_pending`, redelivered once its
   * ack wait runs out), or copies being published. The chain has not settled while any is.
   */
  async waiting(): Promise<number> {
    if (!this.manager) throw new Error(`queue hop ${this.options.name}: not started`);
    const { stream, consumer } = this.options;
    try {
      const info = await this.manager.consumers.info(stream, consumer);
      return info.num_pending + info.num_ack_pending + this.deliveries.publishing;
    } catch (error) {
      throw new Error(
        `queue hop ${this.options.name}: JetStream cannot tell consumer "${consumer}" of "${stream}": ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
  }

  private accept(client: Socket): void {
    const target = new URL(this.options.server);
    const server = tcpConnect({ host: target.hostname, port: Number(target.port || 4222) });
    this.sockets.add(client).add(server);
    const fromClient = new NatsFrameReader();
    const fromServer = new NatsFrameReader();
    /** Deliveries the consumer holds on this connection, by reply subject. */
    const open = new Map<string, Held>();
    let cut = false;
    const close = () => {
      cut = true;
      client.destroy();
      server.destroy();
      this.sockets.delete(client);
      this.sockets.delete(server);
      for (const held of open.values()) this.deliveries.end(held, 'unsettled');
      open.clear();
    };
    /** Garbage in either direction: nothing after it can be read, so the connection ends, said why. */
    const unreadable = (from: string, error: unknown) => {
      this.problems.push(
        `queue hop ${this.options.name}: unreadable NATS from the ${from}, connection closed: ${(error as Error).message}`,
      );
      close();
    };
    /** The frames a chunk completes; none once the connection is cut or the chunk is garbage. */
    const framesOf = (reader: NatsFrameReader, chunk: Buffer, from: string): NatsFrame[] => {
      if (cut) return [];
      try {
        return reader.push(chunk);
      } catch (error) {
        unreadable(from, error);
        return [];
      }
    };
    client.on('close', close).on('error', close);
    server.on('close', close).on('error', close);
    server.on('data', (chunk: Buffer) => {
      for (const frame of framesOf(fromServer, chunk, 'server')) {
        if (frame.op === 'INFO') {
          const info = JSON.parse(frame.args[0] ?? '{}') as ServerInfo;
          if (info.tls_required) {
            unreadable(
              'server',
              new Error('the server requires TLS, which the proxy cannot read; give the verifier a plain nats:// server'),
            );
            return;
          }
          if (typeof info.max_payload === 'number' && info.max_payload > 0) {
            fromClient.maxPayload = fromServer.maxPayload = info.max_payload;
          }
        }
        if (frame.op === 'MSG' || frame.op === 'HMSG') this.delivered(frame, open);
      }
      if (!cut) client.write(chunk);
    });
    client.on('data', (chunk: Buffer) => {
      const copies: Held[] = [];
      // Frame by frame: what the consumer wrote before a faulted ack (a reply, a publish) goes on.
      for (const frame of framesOf(fromClient, chunk, 'consumer')) {
        const outcome = frame.op === 'PUB' || frame.op === 'HPUB' ? this.answerTo(frame, open) : undefined;
        if (!outcome) continue;
        const settled = this.settled(frame.subject as string, outcome, open);
        const faulted = this.deliveries.faulted(settled);
        if (faulted) {
          server.write(chunk.subarray(0, frame.start));
          cut = true;
          open.delete(faulted.reply);
          this.deliveries.withhold(faulted, client, close);
          return;
        }
        for (const held of settled) {
          open.delete(held.reply);
          this.deliveries.end(held, outcome);
          if (outcome === 'acked' && this.deliveries.copied(held)) copies.push(held);
        }
      }
      if (!cut) server.write(chunk);
      for (const held of copies) this.publishCopy(held);
    });
  }

  /** The settlement a consumer's publish carries, when it answers a delivery this connection holds. */
  private answerTo(frame: NatsFrame, open: Map<string, Held>): AttemptOutcome | undefined {
    const ack = readAckSubject(frame.subject);
    if (!ack || ack.stream !== this.options.stream || ack.consumer !== this.options.consumer) return undefined;
    if (!open.has(frame.subject as string) && !this.ackAll) return undefined;
    return settlementOf(frame.payload ?? Buffer.alloc(0));
  }

  /** The held deliveries an answer on `subject` settles: its own, and with `ack_policy: all` an ack's every one before it. */
  private settled(subject: string, outcome: AttemptOutcome, open: Map<string, Held>): Held[] {
    const own = open.get(subject);
    if (!this.ackAll || outcome !== 'acked') return own ? [own] : [];
    const upTo = readAckSubject(subject)?.consumerSequence ?? 0;
    return [...open.values()].filter((held) => held.ack.consumerSequence <= upTo);
  }

  /** Logs a message the server delivered to the consumer, when it is a delivery of the configured consumer. */
  private delivered(frame: NatsFrame, open: Map<string, Held>): void {
    const ack = readAckSubject(frame.reply);
    if (!ack || ack.stream !== this.options.stream || ack.consumer !== this.options.consumer) return;
    const subject = frame.subject as string;
    const payload = frame.payload ?? Buffer.alloc(0);
    const { attempt, faults } = this.deliveries.begin({
      delivery: {
        tag: ack.consumerSequence,
        channel: Number(frame.args[1]),
        redelivered: ack.deliveryCount > 1,
        streamSequence: ack.streamSequence,
        deliveryCount: ack.deliveryCount,
      },
      path: subject,
      keyHash: keyHash(headerValue(frame.headers, this.options.keyHeader)),
      message: messageHash(subject, payload),
    });
    const reply = frame.reply as string;
    const held: Held = { attempt, reply, ack, faults, subject, headers: frame.headers, payload };
    open.set(reply, held);
    // The first copy goes while the consumer still holds the original; the second once it acked it.
    if (this.deliveries.copied(held)) this.publishCopy(held);
  }

  /** Publishes the same message (subject, headers but its id, payload) into the stream, and waits for JetStream's ack. */
  private publishCopy(held: Held): void {
    this.deliveries.copy(held, messageHash(held.subject, held.payload), async () => {
      if (!this.manager) throw new Error('not started');
      const ack = await this.manager.jetstream().publish(held.subject, held.payload, { headers: copiedHeaders(held.headers) });
      if (ack.stream !== this.options.stream) throw new Error(`it landed in stream "${ack.stream}", not "${this.options.stream}"`);
    });
  }
}

/** A message's identity for telling a copy from another message: its subject and payload. */
function messageHash(subject: string, payload: Buffer): string {
  return createHash('sha256').update(subject).update('\0').update(payload).digest('hex');
}

/** The headers of a delivered message for its copy, less those that would keep the copy out of the stream. */
function copiedHeaders(block: Buffer | undefined): MsgHdrs | undefined {
  if (!block) return undefined;
  const copied = natsHeaders();
  for (const line of block.toString('utf8').split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    if (!UNCOPIED_HEADERS.test(name)) copied.append(name, line.slice(colon + 1).trim());
  }
  return copied;
}
