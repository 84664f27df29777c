import { OutgoingMessage, ServerResponse, type OutgoingHttpHeaders } from 'node:http';
import { byteLength, type HttpAnswer } from './http-answer';

/** What the app wrote: the whole answer, or its head once the body outgrew the limit. */
export type Written = { whole: true; answer: HttpAnswer } | { whole: false; status: number; headers: HttpAnswer['headers'] };

/** How far the app got writing a held answer: watched to tell a slow answer from one cut off. */
export interface Writing {
  /** Body bytes the app wrote so far, or -1 while it has written neither its head nor a byte. */
  readonly written: number;
}

/** How a held response is released. */
export interface HoldOptions {
  /** Body bytes held at most; past them the answer streams through as written (`whole: false`). */
  maxBytes: number;
  /**
   * Called once, before anything reaches the client: when the app ended its
   * response, or when its body outgrew `maxBytes`. Resolves with an answer
   * to send instead (ignored after an overflow), or `undefined` to send what
   * the app wrote.
   */
  onWritten(written: Written): Promise<HttpAnswer | undefined>;
  /** Whom the response is held for, while it is: what {@link holderOf} answers. */
  holder?: object;
}

type Callback = (error?: Error | null) => void;
const HOLD = Symbol('idempotency-chain.held-response');
type Held = ServerResponse & { [HOLD]?: HeldResponse };

/**
 * Hold back everything the app writes on a Node response - status, headers,
 * body - until `onWritten` has decided, then send it (or the answer it
 * returns instead). Works at the `ServerResponse` every Node HTTP framework
 * ends up writing to, so it sees what goes on the wire whatever the adapter,
 * serializer or outer interceptors did: this is how an answer is stored
 * before it leaves the server.
 *
 * ```text
 * app: writeHead ── write ── write ── end ─┐        (held, nothing sent)
 *                                          └─ onWritten(answer) ── send answer | replacement
 * ```
 */
export function holdResponse(raw: ServerResponse, options: HoldOptions): Writing {
  const held = (raw as Held)[HOLD];
  return held ? held.takeOver(options) : new HeldResponse(raw, options);
}

/**
 * Whom `raw` is held for (`HoldOptions.holder`), until its answer is on its
 * way: read off the response, which carries one property of this module
 * (an Express response is a dictionary whose every new property costs
 * microseconds), and gone with it, so nothing lives on from the response.
 */
export function holderOf(raw: ServerResponse): object | undefined {
  return (raw as Held)[HOLD]?.holder;
}

/**
 * Send `answer` in place of whatever the app renders on `raw`: the app's
 * own representation (its status, body, `Content-*` headers) is dropped,
 * the headers of this request (CORS, security headers, a request id) stay.
 * How a replay answers with the stored bytes while the app's pipeline runs
 * as usual.
 */
export function replaceResponse(raw: ServerResponse, answer: HttpAnswer): void {
  const held = (raw as Held)[HOLD];
  if (held) held.takeOver(REPLACED, answer);
  else new HeldResponse(raw, REPLACED, answer);
}

/** The options of a replaced response: it keeps no body, so nothing is decided. */
const REPLACED: HoldOptions = { maxBytes: 0, onWritten: () => Promise.resolve(undefined) };

/** The headers of a representation: what a replacement answer brings its own of. */
const REPRESENTATION = new Set([
  'content-type',
  'content-length',
  'content-encoding',
  'content-language',
  'content-location',
  'content-disposition',
  'content-range',
  'etag',
  'last-modified',
  'location',
  'link',
  'transfer-encoding',
]);

/** Statuses that never carry a body, nor a Content-Length of one (RFC 9110 §6.4.1, §8.6). */
const bodiless = (status: number): boolean => status < 200 || status === 204 || status === 304;

// The methods installed on a held response: one shared function each, the
// state on the response itself, so holding costs no closure per request.
function writeHead(
  this: Held,
  status: number,
  reason?: string | OutgoingHttpHeaders | unknown[],
  headers?: OutgoingHttpHeaders | unknown[],
): Held {
  const hold = this[HOLD] as HeldResponse;
  this.statusCode = status;
  if (typeof reason === 'string') this.statusMessage = reason;
  hold.setHeaders(typeof reason === 'string' ? headers : reason);
  hold.started = true;
  return this;
}
function write(this: Held, chunk: unknown, encoding?: BufferEncoding | Callback, callback?: Callback): boolean {
  if (typeof encoding === 'function') [callback, encoding] = [encoding, undefined];
  return (this[HOLD] as HeldResponse).write(chunk, encoding, callback);
}
function end(this: Held, chunk?: unknown, encoding?: BufferEncoding | Callback, callback?: Callback): Held {
  if (typeof chunk === 'function') [callback, chunk] = [chunk as Callback, undefined];
  if (typeof encoding === 'function') [callback, encoding] = [encoding, undefined];
  (this[HOLD] as HeldResponse).end(chunk, encoding, callback);
  return this;
}
function flushHeaders(this: Held): void {
  (this[HOLD] as HeldResponse).started = true;
}
const sentByNode = Object.getOwnPropertyDescriptor(OutgoingMessage.prototype, 'headersSent')?.get as
  ((this: ServerResponse) => boolean) | undefined;
const endedByNode = Object.getOwnPropertyDescriptor(OutgoingMessage.prototype, 'writableEnded')?.get as
  ((this: ServerResponse) => boolean) | undefined;
/**
 * Once the app wrote its head or a byte, it sees the headers as sent, as it
 * would unheld: a stream that fails half way is then cut off, never followed
 * by an error document in the same body.
 */
function headersSent(this: Held): boolean {
  const hold = this[HOLD];
  return hold ? hold.started : (Reflect.get(beneathHold(this), 'headersSent', this) as boolean);
}
/**
 * Once the app called `end()`, the response is ended as far as it can
 * tell, as it would be unheld (`writableEnded` says `end()` was called, not
 * that the bytes left). A framework that awaits the response it sent
 * (Fastify's `reply.then`, which NestJS awaits) then goes on at once
 * instead of watching the stream for its finish.
 */
function writableEnded(this: Held): boolean {
  const hold = this[HOLD];
  return hold ? hold.endCalled : (Reflect.get(beneathHold(this), 'writableEnded', this) as boolean);
}

/**
 * Where a response's own accessors are, beneath the held ones (its own, or
 * its twin's): its prototype's, which an HTTP/2 response has of its own -
 * Node's HTTP/1 getters, read on one, ask it back and never return.
 */
function beneathHold(raw: Held): object {
  const prototype = Object.getPrototypeOf(raw) as { [TWIN]?: true };
  return prototype[TWIN] ? (Object.getPrototypeOf(prototype) as object) : prototype;
}

const HELD_METHODS = { writeHead, write, end, flushHeaders };
type MethodName = keyof typeof HELD_METHODS;
const METHOD_NAMES = Object.keys(HELD_METHODS) as MethodName[];
const TWIN = Symbol('idempotency-chain.held-twin');

/**
 * The held twin of a response prototype: a prototype under it with the held
 * methods and accessors, each doing what the prototype's own does while the
 * response is not held (or no longer). One per prototype (each Express
 * app's), made once.
 */
const twins = new WeakMap<object, object>();
function heldTwin(prototype: object): object {
  const known = twins.get(prototype);
  if (known) return known;
  const unheld = prototype as Record<MethodName, (...args: unknown[]) => unknown>;
  const properties: PropertyDescriptorMap = { [TWIN]: { value: true } };
  for (const name of METHOD_NAMES) {
    const held = HELD_METHODS[name] as (...args: unknown[]) => unknown;
    const value = function (this: Held, ...args: unknown[]): unknown {
      return (this[HOLD] ? held : unheld[name]).apply(this, args);
    };
    properties[name] = { value, writable: true, configurable: true };
  }
  if (sentByNode) properties.headersSent = { get: headersSent, configurable: true };
  if (endedByNode) properties.writableEnded = { get: writableEnded, configurable: true };
  const twin = Object.create(prototype, properties) as object;
  twins.set(prototype, twin);
  return twin;
}

/**
 * Whether `raw` is held through a held twin of its prototype rather than
 * with methods of its own: when its prototype is not Node's (an Express
 * response: Express swaps it for its app's), and nothing wrapped its
 * methods as its own (a compression middleware does: those must stay
 * beneath the held ones). Such a response is a dictionary-mode object, on
 * which every property added costs about 3 µs (measured): a twin costs it
 * one; on Node's own response, where adding is cheap and a prototype swap
 * is not, the methods are its own.
 */
function heldByTwin(raw: Held): boolean {
  const prototype = Object.getPrototypeOf(raw) as object;
  if (prototype === ServerResponse.prototype) return false;
  return !METHOD_NAMES.some((name) => Object.hasOwn(raw, name));
}

/** The held methods' originals, called with the arguments Node's take (their overloads are not needed here). */
type Methods = Record<MethodName, (this: ServerResponse, ...args: unknown[]) => unknown>;

/** A response's methods as `target` has them now. */
function methodsOf(target: Held): Methods {
  const { writeHead, write, end, flushHeaders } = target as unknown as Methods;
  return { writeHead, write, end, flushHeaders };
}

class HeldResponse implements Writing {
  /** The app wrote its head or part of its body. */
  started = false;
  /**
   * The response's methods as they were before it was held: what the
   * decided answer is written with, past any wrapper installed on the
   * response while it was held, which saw the app's own writes already.
   */
  private readonly unheld: Methods;
  /** Held with methods of its own, which `restore` puts back; else through a twin of its prototype (see `heldByTwin`). */
  private readonly ownMethods: boolean;
  private chunks: Array<string | Buffer> = [];
  /** Every chunk is text the app wrote as a UTF-8 string: the body stays a string, never copied to bytes and back. */
  private text = true;
  private size = 0;
  private state: 'holding' | 'deciding' | 'released' = 'holding';
  private ended: Callback | undefined | false = false;

  /** Keep no body: the answer is replaced, so the app's representation is dropped. */
  private replacing: boolean;

  constructor(
    private readonly raw: Held,
    /** How the app's own answer is decided on (never consulted for a replacement). */
    private options: HoldOptions,
    /** What is sent instead of whatever the app renders. */
    private replacement?: HttpAnswer,
  ) {
    this.replacing = replacement !== undefined;
    // Assigned, never deleted afterwards: a deleted own property would turn
    // the response into a slow dictionary-mode object for the rest of its life.
    raw[HOLD] = this;
    this.ownMethods = !heldByTwin(raw);
    if (!this.ownMethods) {
      const prototype = Object.getPrototypeOf(raw) as Held & { [TWIN]?: true };
      if (!prototype[TWIN]) Object.setPrototypeOf(raw, heldTwin(prototype));
      this.unheld = methodsOf(beneathHold(raw) as Held);
      return;
    }
    this.unheld = methodsOf(raw);
    raw.writeHead = writeHead;
    raw.write = write as ServerResponse['write'];
    raw.end = end as ServerResponse['end'];
    raw.flushHeaders = flushHeaders;
    if (sentByNode) Object.defineProperty(raw, 'headersSent', { get: headersSent, configurable: true });
    if (endedByNode) Object.defineProperty(raw, 'writableEnded', { get: writableEnded, configurable: true });
  }

  /**
   * Hold for someone else from now on: a handler run again within its
   * request (an app interceptor's rxjs `retry()`) under a fresh claim, or
   * answered by a replay, after the execution that held the response first
   * had ended. Holding it a second time instead would leave two holders,
   * the first of which would restore the methods the second installed.
   */
  takeOver(options: HoldOptions, replacement?: HttpAnswer): this {
    if (this.state !== 'holding') throw new TypeError('A response whose answer is being sent cannot be held again');
    this.options = options;
    this.replacement = replacement;
    this.replacing = replacement !== undefined;
    if (this.replacing) [this.chunks, this.size] = [[], 0];
    return this;
  }

  get holder(): object | undefined {
    return this.options.holder;
  }

  get written(): number {
    return this.started ? this.size : -1;
  }

  /** The app called `end()`. */
  get endCalled(): boolean {
    return this.ended !== false;
  }

  setHeaders(headers: OutgoingHttpHeaders | unknown[] | undefined): void {
    if (!headers) return;
    const { raw } = this;
    if (Array.isArray(headers)) {
      // Node takes [[name, value], ...] or a flat [name, value, name, value]; a name may repeat.
      const pairs: Array<[string, string]> = Array.isArray(headers[0])
        ? (headers as Array<[string, string]>)
        : Array.from({ length: headers.length >> 1 }, (_, i) => [String(headers[2 * i]), String(headers[2 * i + 1])]);
      const seen = new Set<string>();
      for (const [name, value] of pairs) {
        if (!this.kept(name)) continue;
        const lower = name.toLowerCase();
        if (seen.has(lower)) raw.appendHeader(name, value);
        else raw.setHeader(name, value);
        seen.add(lower);
      }
      return;
    }
    for (const name in headers) {
      const value = headers[name];
      if (value !== undefined && this.kept(name)) raw.setHeader(name, value);
    }
  }

  write(chunk: unknown, encoding?: BufferEncoding, callback?: Callback): boolean {
    this.keep(chunk, encoding);
    // Held, as far as the writer knows, written: it may write the next one.
    if (callback) process.nextTick(callback);
    return this.state !== 'deciding';
  }

  end(chunk?: unknown, encoding?: BufferEncoding, callback?: Callback): void {
    if (this.ended !== false) return;
    if (chunk !== undefined && chunk !== null) this.keep(chunk, encoding);
    this.ended = callback;
    if (this.state === 'holding') this.decide();
  }

  /** A header the app sets while its answer is replaced is kept only when it is not about the representation. */
  private kept(name: string): boolean {
    return !this.replacing || !REPRESENTATION.has(name.toLowerCase());
  }

  private keep(chunk: unknown, encoding?: BufferEncoding): void {
    this.started = true;
    if (this.replacing) return;
    let kept: string | Buffer;
    if (typeof chunk === 'string' && (encoding === undefined || encoding === 'utf8' || encoding === 'utf-8')) {
      kept = chunk;
    } else {
      this.text = false;
      kept = Buffer.isBuffer(chunk)
        ? chunk
        : typeof chunk === 'string'
          ? Buffer.from(chunk, encoding)
          : Buffer.from((chunk as Uint8Array).buffer, (chunk as Uint8Array).byteOffset, (chunk as Uint8Array).byteLength);
    }
    const size = byteLength(kept);
    if (size === 0) return;
    this.chunks.push(kept);
    this.size += size;
    if (this.state === 'holding' && this.size > this.options.maxBytes) this.overflow();
  }

  private decide(): void {
    this.state = 'deciding';
    if (this.replacing) {
      // Nothing to decide: the replacement is known, and goes out in this turn.
      this.send(this.replacement, true);
      return;
    }
    const body = this.body();
    const answer: HttpAnswer = { status: this.raw.statusCode, headers: this.headers(), body };
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
      const { raw, unheld } = this;
      for (const chunk of this.chunks) unheld.write.call(raw, chunk);
      this.chunks = [];
      if (this.ended !== false) unheld.end.call(raw, this.ended);
      else raw.emit('drain');
    };
    this.options.onWritten({ whole: false, status: this.raw.statusCode, headers: this.headers() }).then(release, release);
  }

  private send(answer: HttpAnswer | undefined, replacing: boolean): void {
    this.restore();
    const { raw } = this;
    if (answer && replacing) {
      // The replacement's representation replaces the rendered one; headers of
      // this request (CORS, security headers, a request id) stay.
      for (const name of raw.getHeaderNames()) if (REPRESENTATION.has(name) || name in answer.headers) raw.removeHeader(name);
      raw.statusCode = answer.status;
      for (const name in answer.headers) raw.setHeader(name, answer.headers[name] as string | string[]);
    }
    const body = answer?.body ?? '';
    if (bodiless(raw.statusCode)) {
      raw.removeHeader('content-length');
      raw.removeHeader('transfer-encoding');
      this.unheld.end.call(raw, this.ended || undefined);
      return;
    }
    // A HEAD answer keeps the length of the body it would have had.
    if (!raw.hasHeader('transfer-encoding') && !(raw.req?.method === 'HEAD' && raw.hasHeader('content-length'))) {
      raw.setHeader('content-length', byteLength(body));
    }
    this.unheld.end.call(raw, body, this.ended || undefined);
  }

  /** What the app wrote, as one string when it wrote text, else as bytes. */
  private body(): string | Buffer {
    const { chunks } = this;
    if (chunks.length === 1) return chunks[0] as string | Buffer;
    if (chunks.length === 0) return this.text ? '' : Buffer.alloc(0);
    if (this.text) return chunks.join('');
    return Buffer.concat(
      chunks.map((chunk) => (typeof chunk === 'string' ? Buffer.from(chunk) : chunk)),
      this.size,
    );
  }

  /** The response's headers now, lower-case names, values as strings. */
  private headers(): HttpAnswer['headers'] {
    const headers: HttpAnswer['headers'] = {};
    const all = this.raw.getHeaders();
    for (const name in all) {
      const value = all[name];
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.map(String) : String(value);
    }
    return headers;
  }

  private restore(): void {
    this.state = 'released';
    const { raw, unheld } = this;
    raw[HOLD] = undefined;
    // Held by a twin: the twin's methods are the prototype's again from now on.
    if (!this.ownMethods) return;
    Object.assign(raw, unheld);
  }
}
