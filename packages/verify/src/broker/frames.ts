import { decodeFrame, parseFrame } from 'amqplib/lib/frame';

/** What the first bytes of a client's AMQP connection are: the protocol header, not a frame. */
const PROTOCOL_HEADER_BYTES = 8;

/** One decoded frame, as amqplib's codec reads it. */
export type Frame = ReturnType<typeof decodeFrame>;

/**
 * Cuts one direction of an AMQP 0-9-1 connection into decoded frames as its
 * bytes arrive (a frame may span chunks, a chunk may hold many), with amqplib's
 * own codec. The client's direction starts with the 8-byte protocol header.
 */
export class FrameReader {
  private pending = Buffer.alloc(0);
  private skip: number;

  constructor(clientSide: boolean) {
    this.skip = clientSide ? PROTOCOL_HEADER_BYTES : 0;
  }

  /** The frames this chunk completes, in order. Throws on bytes that are not AMQP framing. */
  push(chunk: Buffer): Frame[] {
    let data = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    if (this.skip > 0) {
      const skipped = Math.min(this.skip, data.length);
      this.skip -= skipped;
      data = data.subarray(skipped);
    }
    const frames: Frame[] = [];
    for (let parsed = parseFrame(data); parsed; parsed = parseFrame(data)) {
      frames.push(decodeFrame(parsed));
      data = parsed.rest;
    }
    // A copy: the chunk's buffer is the socket's, reused once this returns.
    this.pending = Buffer.from(data);
    return frames;
  }
}
