/**
 * NATS's longest control line by default (the server's `max_control_line`): a line
 * longer than this without its CRLF is not NATS, and is not buffered further.
 */
export const MAX_CONTROL_LINE_BYTES = 4096;

/** The payload limit before the server's INFO said its own (`max_payload`): the server's default. */
const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;

/** The operations of NATS's client protocol, both directions. */
const OPERATIONS = ['INFO', 'CONNECT', 'PUB', 'HPUB', 'SUB', 'UNSUB', 'MSG', 'HMSG', 'PING', 'PONG', '+OK', '-ERR'] as const;

/** One operation of NATS's client protocol. */
type NatsOperation = (typeof OPERATIONS)[number];

/** The operations that carry a payload, and how many of their arguments come before its sizes. */
const WITH_PAYLOAD: Partial<Record<NatsOperation, { headers: boolean }>> = {
  PUB: { headers: false },
  HPUB: { headers: true },
  MSG: { headers: false },
  HMSG: { headers: true },
};

const CRLF = Buffer.from('\r\n');

/** One protocol message read off a NATS connection. */
export interface NatsFrame {
  op: NatsOperation;
  /** The control line's arguments after the operation, sizes included (INFO's and CONNECT's JSON is one). */
  args: string[];
  /** The subject a PUB, HPUB, MSG or HMSG carries. */
  subject?: string;
  /** Its reply subject, when it has one. */
  reply?: string;
  /** The header block of an HPUB or HMSG (`NATS/1.0` line included), raw. */
  headers?: Buffer;
  /** The payload after the headers. */
  payload?: Buffer;
  /** Where the frame starts in the chunk that completed it: 0 when it began in an earlier chunk. */
  start: number;
}

/**
 * Cuts one direction of a NATS client connection into protocol messages as its bytes
 * arrive (a message may span chunks, a chunk may hold many). Bounded: a control line
 * longer than {@link MAX_CONTROL_LINE_BYTES}, a payload larger than the server's
 * `max_payload`, an unknown operation or malformed sizes throw, and the reader is then
 * broken for good (the connection is to be closed: nothing after garbage can be framed).
 */
export class NatsFrameReader {
  /** The bytes of a frame not yet whole, in the chunks they came in: joined once the frame is. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** How many bytes the frame begun in `pending` needs in all, once its control line said; 0 while unknown. */
  private awaiting = 0;
  private broken: Error | undefined;
  /** The largest payload accepted; set from the server's INFO `max_payload`. */
  maxPayload = DEFAULT_MAX_PAYLOAD_BYTES;

  /** The messages this chunk completes, in order, each with its offset in the chunk. */
  push(chunk: Buffer): NatsFrame[] {
    if (this.broken) throw this.broken;
    if (this.awaiting > 0 && this.pendingBytes + chunk.length < this.awaiting) {
      // A large payload arriving: kept as it came, not copied again with each chunk until it is whole.
      this.pending.push(Buffer.from(chunk));
      this.pendingBytes += chunk.length;
      return [];
    }
    const data = this.pendingBytes === 0 ? chunk : Buffer.concat([...this.pending, chunk]);
    this.awaiting = 0;
    // Bytes of `data` that came before this chunk: a frame starting there starts at 0 in it.
    const carried = data.length - chunk.length;
    const frames: NatsFrame[] = [];
    let at = 0;
    try {
      for (;;) {
        const read = this.frameAt(data, at);
        if (!read) break;
        frames.push({ ...read.frame, start: Math.max(0, at - carried) });
        at = read.end;
      }
    } catch (error) {
      this.broken = error as Error;
      this.pending = [];
      this.pendingBytes = 0;
      throw error;
    }
    // A copy: the chunk's buffer is the socket's, reused once this returns.
    const rest = Buffer.from(data.subarray(at));
    this.pending = rest.length === 0 ? [] : [rest];
    this.pendingBytes = rest.length;
    return frames;
  }

  /** The whole frame at `at`, and where it ends; `undefined` while its bytes have not all come. */
  private frameAt(data: Buffer, at: number): { frame: Omit<NatsFrame, 'start'>; end: number } | undefined {
    const lineEnd = data.indexOf(CRLF, at);
    if (lineEnd < 0) {
      if (data.length - at > MAX_CONTROL_LINE_BYTES) {
        throw new Error(`a control line longer than ${MAX_CONTROL_LINE_BYTES} bytes without its CRLF: not NATS`);
      }
      return undefined;
    }
    if (lineEnd - at > MAX_CONTROL_LINE_BYTES)
      throw new Error(`a control line of ${lineEnd - at} bytes: at most ${MAX_CONTROL_LINE_BYTES}`);
    const line = data.toString('latin1', at, lineEnd);
    const [word = '', ...rest] = line.trim().split(/[ \t]+/);
    const op = OPERATIONS.find((o) => o === word.toUpperCase());
    if (!op) throw new Error(`unknown operation ${JSON.stringify(printable(word))}: not NATS`);
    const afterLine = lineEnd + CRLF.length;
    if (op === 'INFO' || op === 'CONNECT' || op === '-ERR') {
      const arg = line.trim().slice(word.length).trim();
      return { frame: { op, args: arg === '' ? [] : [arg] }, end: afterLine };
    }
    const shape = WITH_PAYLOAD[op];
    if (!shape) return { frame: { op, args: rest }, end: afterLine };
    const sizes = shape.headers ? 2 : 1;
    // PUB subject [reply] size; MSG subject sid [reply] size; H* with a header size before the total.
    const fixed = (op === 'MSG' || op === 'HMSG' ? 2 : 1) + sizes;
    if (rest.length !== fixed && rest.length !== fixed + 1) throw new Error(`${op} with ${rest.length} arguments: malformed`);
    const total = size(rest.at(-1) as string, op);
    const headerSize = shape.headers ? size(rest.at(-2) as string, op) : 0;
    if (total > this.maxPayload) throw new Error(`${op} of ${total} bytes: larger than the server's max_payload ${this.maxPayload}`);
    if (headerSize > total) throw new Error(`${op} with a header block of ${headerSize} bytes in ${total}: malformed`);
    const end = afterLine + total + CRLF.length;
    if (data.length < end) {
      this.awaiting = end - at;
      return undefined;
    }
    if (!data.subarray(end - CRLF.length, end).equals(CRLF)) throw new Error(`${op}'s payload does not end with CRLF: malformed`);
    const body = data.subarray(afterLine, afterLine + total);
    const subject = rest[0] as string;
    const reply = rest.length === fixed + 1 ? (rest[op === 'MSG' || op === 'HMSG' ? 2 : 1] as string) : undefined;
    return {
      frame: {
        op,
        args: rest,
        subject,
        ...(reply === undefined ? {} : { reply }),
        ...(shape.headers ? { headers: Buffer.from(body.subarray(0, headerSize)) } : {}),
        payload: Buffer.from(body.subarray(headerSize)),
      },
      end,
    };
  }
}

/**
 * A header's value in a NATS header block (`NATS/1.0` then `Name: value` lines), the
 * name matched case-insensitively as most clients do; the first if it repeats.
 */
export function headerValue(block: Buffer | undefined, name: string): string | undefined {
  if (!block) return undefined;
  const wanted = name.toLowerCase();
  for (const line of block.toString('utf8').split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === wanted) return line.slice(colon + 1).trim();
  }
  return undefined;
}

function size(text: string, op: string): number {
  if (!/^\d{1,10}$/.test(text)) throw new Error(`${op} with size ${JSON.stringify(printable(text))}: not a number`);
  return Number(text);
}

/** At most 40 characters of what was read, control characters escaped, for an error message. */
function printable(text: string): string {
  return text.slice(0, 40);
}
