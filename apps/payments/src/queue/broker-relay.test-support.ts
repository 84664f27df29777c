import { once } from 'node:events';
import { connect as connectTcp, createServer, type Socket } from 'node:net';

/** AMQP 0-9-1 opens with this 8-byte header, then frames: type (1), channel (2), size (4), payload, end (1). */
const PROTOCOL_HEADER_BYTES = 8;
const FRAME_HEADER_BYTES = 7;
const METHOD_FRAME = 1;
/** basic.consume: class 60, method 20, the first four bytes of its method frame's payload. */
const BASIC_CONSUME = { classId: 60, methodId: 20 };

/**
 * A TCP relay to the broker that a test can cut and restore: the broker
 * going away and coming back, or the connection lost at one exact point of
 * the client's conversation (`cutAtNextConsume`); or only told of that
 * point (`nextConsume`).
 */
export class BrokerRelay {
  /** The loopback port clients connect to; ephemeral until the first `listen`, then kept. */
  port = 0;
  private server = createServer();
  private readonly sockets = new Set<Socket>();
  private atConsume: { cut: boolean; done: () => void } | undefined;

  constructor(private readonly upstream: { host: string; port: number }) {}

  /** Accept connections (again, on the same port after a `cut`). */
  async listen(): Promise<void> {
    this.server = createServer((client) => this.relay(client));
    this.server.listen(this.port, '127.0.0.1');
    await once(this.server, 'listening');
    this.port = (this.server.address() as { port: number }).port;
  }

  get listening(): boolean {
    return this.server.listening;
  }

  /** Stop accepting and destroy every connection: the broker gone. */
  async cut(): Promise<void> {
    const closed = new Promise((resolve) => this.server.close(resolve));
    this.destroyAll();
    await closed;
  }

  /**
   * Destroy every connection, still listening, as soon as a client sends
   * `basic.consume`, before the broker reads it: the connection lost while
   * a consumer subscribes, its answer due. Resolves once cut.
   */
  cutAtNextConsume(): Promise<void> {
    return this.atNextConsume(true);
  }

  /** Resolves once a client has sent `basic.consume`, passed on to the broker. */
  nextConsume(): Promise<void> {
    return this.atNextConsume(false);
  }

  private atNextConsume(cut: boolean): Promise<void> {
    return new Promise((resolve) => {
      this.atConsume = { cut, done: resolve };
    });
  }

  private destroyAll(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  private relay(client: Socket): void {
    const server = connectTcp(this.upstream.port, this.upstream.host);
    for (const socket of [client, server]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    const frames = new FrameReader();
    client.on('data', (chunk: Buffer) => {
      // Every chunk is read, so that the frames stay in step whenever a cut is asked for.
      const at = frames.read(chunk).some(isBasicConsume) ? this.atConsume : undefined;
      if (at !== undefined) this.atConsume = undefined;
      if (at?.cut) this.destroyAll();
      else server.write(chunk);
      at?.done();
    });
    server.pipe(client);
  }
}

/** The method frames' payloads in a client's byte stream, as its chunks arrive. */
class FrameReader {
  private pending = Buffer.alloc(0);
  private headerSkipped = false;

  /** The method payloads completed by `chunk`. */
  read(chunk: Buffer): Buffer[] {
    this.pending = Buffer.concat([this.pending, chunk]);
    if (!this.headerSkipped) {
      if (this.pending.length < PROTOCOL_HEADER_BYTES) return [];
      this.pending = this.pending.subarray(PROTOCOL_HEADER_BYTES);
      this.headerSkipped = true;
    }
    const methods: Buffer[] = [];
    while (this.pending.length >= FRAME_HEADER_BYTES) {
      const size = this.pending.readUInt32BE(3);
      const end = FRAME_HEADER_BYTES + size + 1;
      if (this.pending.length < end) break;
      if (this.pending.readUInt8(0) === METHOD_FRAME) methods.push(this.pending.subarray(FRAME_HEADER_BYTES, end - 1));
      this.pending = this.pending.subarray(end);
    }
    return methods;
  }
}

const isBasicConsume = (payload: Buffer) =>
  payload.length >= 4 && payload.readUInt16BE(0) === BASIC_CONSUME.classId && payload.readUInt16BE(2) === BASIC_CONSUME.methodId;
