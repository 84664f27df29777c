import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { HttpAnswer } from './http-answer';

/** What the app wrote: the whole answer, or its head once the body outgrew the limit. */
export type Written =
  | { whole: true; answer: HttpAnswer }
  | { whole: false; status: number; headers: HttpAnswer['headers'] };

/** How a held response is released. */
export interface HoldOptions {
  /** Body bytes held at most; past them the answer streams through as written (`whole: false`). */
  maxBytes: number;
  /** Keep no body bytes at all: the answer will be replaced (a replay). */
  discard?: boolean;
  /**
   * Called once, before anything reaches the client: when the app ended its
   * response, or when its body outgrew `maxBytes`. Resolves with an answer
   * to send instead (ignored after an overflow), or `undefined` to send what
   * the app wrote.
   */
  onWritten(written: Written): Promise<HttpAnswer | undefined>;
}

type Method = 'writeHead' | 'write' | 'end' | 'flushHeaders';
const METHODS: readonly Method[] = ['writeHead', 'write', 'end', 'flushHeaders'];
type Callback = (error?: Error | null) => void;

/**
 * Hold back everything the app writes on a Node response - status, headers,
 * body - until `onWritten` has decided, then send it (or the answer it
 * returns instead). Works at the `ServerResponse` every Node HTTP framework
 * ends up writing to, so it sees what goes on the wire whatever the adapter,
 * serializer or outer interceptors did: this is how an answer is stored
 * before it leaves the server, and how a replay replaces the answer the
 * pipeline rendered with the stored bytes.
 *
 * ```text
 * app: writeHead ── write ── write ── end ─┐        (held, nothing sent)
 *                                          └─ onWritten(answer) ── send answer | replacement
 * ```
 */
export function holdResponse(raw: ServerResponse, options: HoldOptions): void {
  new HeldResponse(raw, options);
}

/** The representation headers of `raw` now: what a replacement answer must not inherit. */
function headersOf(raw: ServerResponse): HttpAnswer['headers'] {
  const headers: HttpAnswer['headers'] = {};
  for (const [name, value] of Object.entries(raw.getHeaders())) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.map(String) : String(value);
  }
  return headers;
}

class HeldResponse {
  private readonly saved = new Map<Method, PropertyDescriptor | undefined>();
  private readonly chunks: Buffer[] = [];
  private readonly callbacks: Callback[] = [];
  private size = 0;
  private state: 'holding' | 'deciding' | 'released' = 'holding';
  private ended: Callback | undefined | false = false;

  constructor(
    private readonly raw: ServerResponse,
    private readonly options: HoldOptions,
  ) {
    for (const method of METHODS) this.saved.set(method, Object.getOwnPropertyDescriptor(raw, method));
    const self = this;
    Object.assign(raw, {
      writeHead(status: number, reason?: string | OutgoingHttpHeaders | unknown[], headers?: OutgoingHttpHeaders | unknown[]) {
        raw.statusCode = status;
        if (typeof reason === 'string') raw.statusMessage = reason;
        self.setHeaders(typeof reason === 'string' ? headers : reason);
        return raw;
      },
      write(chunk: unknown, encoding?: BufferEncoding | Callback, callback?: Callback) {
        if (typeof encoding === 'function') [callback, encoding] = [encoding, undefined];
        self.keep(chunk, encoding, callback);
        return self.state === 'holding';
      },
      end(chunk?: unknown, encoding?: BufferEncoding | Callback, callback?: Callback) {
        if (typeof chunk === 'function') [callback, chunk] = [chunk as Callback, undefined];
        if (typeof encoding === 'function') [callback, encoding] = [encoding, undefined];
        if (self.ended !== false) return raw;
        if (chunk !== undefined && chunk !== null) self.keep(chunk, encoding);
        self.ended = callback;
        if (self.state === 'holding') self.decide();
        return raw;
      },
      flushHeaders() {},
    });
  }

  private setHeaders(headers: OutgoingHttpHeaders | unknown[] | undefined): void {
    if (Array.isArray(headers)) {
      // Node takes [[name, value], ...] or a flat [name, value, name, value].
      const pairs = Array.isArray(headers[0]) ? (headers as Array<[string, string]>) : [];
      if (pairs.length === 0) for (let i = 0; i + 1 < headers.length; i += 2) pairs.push([String(headers[i]), String(headers[i + 1])]);
      for (const [name, value] of pairs) this.raw.setHeader(name, value);
    } else if (headers) {
      for (const [name, value] of Object.entries(headers)) if (value !== undefined) this.raw.setHeader(name, value);
    }
  }

  private keep(chunk: unknown, encoding?: BufferEncoding, callback?: Callback): void {
    if (callback) this.callbacks.push(callback);
    if (this.options.discard) return;
    const bytes = Buffer.isBuffer(chunk)
      ? chunk
      : typeof chunk === 'string'
        ? Buffer.from(chunk, encoding ?? 'utf8')
        : Buffer.from((chunk as Uint8Array).buffer, (chunk as Uint8Array).byteOffset, (chunk as Uint8Array).byteLength);
    if (bytes.length === 0) return;
    this.chunks.push(bytes);
    this.size += bytes.length;
    if (this.state === 'holding' && this.size > this.options.maxBytes) this.overflow();
  }

  private decide(): void {
    this.state = 'deciding';
    const answer: HttpAnswer = { status: this.raw.statusCode, headers: headersOf(this.raw), body: Buffer.concat(this.chunks, this.size) };
    this.options.onWritten({ whole: true, answer }).then(
      (replacement) => this.send(replacement ?? answer, replacement !== undefined),
      () => this.send(answer, false),
    );
  }

  /** Past the limit: decide on the head, then let the body through as the app writes it. */
  private overflow(): void {
    this.state = 'deciding';
    const release = () => {
      this.restore();
      for (const chunk of this.chunks.splice(0)) this.raw.write(chunk);
      this.flushCallbacks();
      if (this.ended !== false) this.raw.end(this.ended);
      else this.raw.emit('drain');
    };
    this.options.onWritten({ whole: false, status: this.raw.statusCode, headers: headersOf(this.raw) }).then(release, release);
  }

  private send(answer: HttpAnswer, replacing: boolean): void {
    this.restore();
    const { raw } = this;
    if (replacing) {
      // The replacement's representation replaces the rendered one; headers of
      // this request (CORS, a request id) stay.
      for (const name of raw.getHeaderNames()) if (isRepresentation(name, answer)) raw.removeHeader(name);
      raw.statusCode = answer.status;
      for (const [name, value] of Object.entries(answer.headers)) raw.setHeader(name, value);
    }
    if (!raw.hasHeader('transfer-encoding')) raw.setHeader('content-length', answer.body.length);
    raw.end(answer.body, this.ended || undefined);
    this.flushCallbacks();
  }

  private restore(): void {
    this.state = 'released';
    for (const [method, descriptor] of this.saved) {
      if (descriptor) Object.defineProperty(this.raw, method, descriptor);
      else delete (this.raw as unknown as Record<string, unknown>)[method];
    }
  }

  private flushCallbacks(): void {
    for (const callback of this.callbacks.splice(0)) process.nextTick(callback);
  }
}

const REPRESENTATION = /^content-|^(etag|last-modified|location|link|transfer-encoding)$/;

function isRepresentation(name: string, answer: HttpAnswer): boolean {
  return REPRESENTATION.test(name) || name in answer.headers;
}
