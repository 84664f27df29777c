import { decodeFrame, parseFrame } from 'amqplib/lib/frame';

/** What the first bytes of a client's AMQP connection are: the protocol header, not a frame. */
const PROTOCOL_HEADER_BYTES = 8;

/** What a frame takes besides its payload: type (1), channel (2), payload size (4) and the frame-end octet (1). */
const FRAME_OVERHEAD_BYTES = 8;

/** One decoded frame, as amqplib's codec reads it. */
export type Frame = ReturnType<typeof decodeFrame>;

/** A decoded frame and where it starts in the chunk that completed it: 0 when it began in an earlier chunk. */
export interface ChunkFrame {
  frame: Frame;
  start: number;
}

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

  /**
   * The frames this chunk completes, in order, each with its offset in the chunk, so
   * the bytes before a frame can go on without it. Throws on bytes that are not AMQP framing.
   */
  push(chunk: Buffer): ChunkFrame[] {
    let data = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    if (this.skip > 0) {
      const skipped = Math.min(this.skip, data.length);
      this.skip -= skipped;
      data = data.subarray(skipped);
    }
    const frames: ChunkFrame[] = [];
    for (let parsed = parseFrame(data); parsed; parsed = parseFrame(data)) {
      // What follows the frame is the chunk's tail: the frame ends that far before the chunk does.
      const end = chunk.length - parsed.rest.length;
      frames.push({ frame: decodeFrame(parsed), start: Math.max(0, end - FRAME_OVERHEAD_BYTES - parsed.size) });
      data = parsed.rest;
    }
    // A copy: the chunk's buffer is the socket's, reused once this returns.
    this.pending = Buffer.from(data);
    return frames;
  }
}
