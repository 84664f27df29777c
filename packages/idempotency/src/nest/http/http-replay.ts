import type { ServerResponse } from 'node:http';
import { finished } from 'node:stream';
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate, type ZlibOptions } from 'node:zlib';
import { DecompressionBusyError, EncodingNotAcceptableError } from '../../errors';
import { HeaderName } from '../../header-name';
import type { DecompressionBudget } from './decompression-budget';
import { replaceResponse } from './held-response';
import { problemAnswer, type HttpAnswer } from './http-answer';

type Decoder = (body: Buffer, options: Pick<ZlibOptions, 'maxOutputLength'>) => Promise<Buffer>;
const gunzipAsync = promisify(gunzip) as Decoder;
const DECODERS: Record<string, Decoder> = {
  gzip: gunzipAsync,
  'x-gzip': gunzipAsync,
  deflate: promisify(inflate),
  br: promisify(brotliDecompress),
};

/** What a replay may decompress: each answer up to `maxBytes`, and all of them together within `budget`. */
export interface ReplayDecompression {
  maxBytes: number;
  budget: DecompressionBudget;
}

/**
 * Send a stored answer as the answer to this request. Whatever the app's
 * pipeline renders is replaced by the stored bytes (see `replaceResponse`);
 * a route that writes its response itself (`@Res()` without passthrough)
 * renders nothing, so the answer is written at once.
 *
 * A body the app compressed (a compression hook before the answer was
 * stored) is decompressed for a client that does not accept its encoding:
 * off the event loop, in zlib's thread pool, and only up to
 * `decompression.maxBytes`, where the decoder is stopped. Past them the
 * client is answered 406 `encoding-not-acceptable` instead: a small stored
 * answer can inflate a thousandfold, and every such replay would cost that
 * much memory again. Each decompression holds `maxBytes` of the process's
 * budget while it runs, then what it decoded until its answer is sent; one
 * that does not fit is answered 503 `decompression-busy` with `Retry-After`,
 * and nothing is decoded. Resolves once the answer is sent (or set to
 * replace the rendered one); without anything to decode, it is sent at once,
 * with no promise.
 */
export function sendReplay(
  raw: ServerResponse,
  stored: HttpAnswer,
  acceptEncoding: string | string[] | undefined,
  writesItself: boolean,
  decompression: ReplayDecompression,
): void | Promise<void> {
  const encoding = encodingToUndo(stored, acceptEncoding);
  if (encoding === undefined) return send(raw, stored, writesItself);
  const { maxBytes } = decompression;
  const reservation = decompression.budget.take(maxBytes);
  if (!reservation) {
    const busy = new DecompressionBusyError(
      `The stored answer is ${encoding}-encoded and this server is decompressing as many answers as it may: retry, or send Accept-Encoding: ${encoding}`,
    );
    return send(raw, problemAnswer(busy), writesItself);
  }
  // Sent or abandoned, the decoded body is no longer this replay's to hold.
  finished(raw, () => reservation.resize(0));
  return (DECODERS[encoding] as Decoder)(stored.body as Buffer, { maxOutputLength: maxBytes }).then(
    (body) => {
      reservation.resize(body.length);
      const { 'content-encoding': _encoding, ...headers } = stored.headers;
      send(raw, { status: stored.status, headers, body }, writesItself);
    },
    (error: { code?: string }) => {
      reservation.resize(0);
      if (error.code !== 'ERR_BUFFER_TOO_LARGE') return send(raw, stored, writesItself); // not valid in its encoding: as it went out
      const refusal = new EncodingNotAcceptableError(
        `The stored answer is ${encoding}-encoded and larger than ${maxBytes} bytes decoded: send Accept-Encoding: ${encoding}`,
      );
      send(raw, problemAnswer(refusal), writesItself);
    },
  );
}

function send(raw: ServerResponse, answer: HttpAnswer, writesItself: boolean): void {
  if (!writesItself) return replaceResponse(raw, answer);
  raw.statusCode = answer.status;
  for (const name in answer.headers) raw.setHeader(name, answer.headers[name] as string | string[]);
  raw.setHeader(HeaderName.Replayed, 'true');
  raw.end(answer.body);
}

/** The stored answer's content coding when the client does not accept it and it can be undone; else `undefined`. */
function encodingToUndo(answer: HttpAnswer, acceptEncoding: string | string[] | undefined): string | undefined {
  const header = answer.headers['content-encoding'];
  if (typeof header !== 'string') return undefined;
  const encoding = header.toLowerCase();
  if (encoding === 'identity' || accepts(acceptEncoding, encoding)) return undefined;
  // Compressed bytes are never stored as text.
  return Object.hasOwn(DECODERS, encoding) && typeof answer.body !== 'string' ? encoding : undefined;
}

/** Whether an `Accept-Encoding` value accepts `encoding` (q > 0, by name or `*`). */
function accepts(header: string | string[] | undefined, encoding: string): boolean {
  const value = Array.isArray(header) ? header.join(',') : (header ?? '');
  let star = false;
  for (const part of value.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const allowed = q === undefined || Number(q.slice(2)) > 0;
    if (name === encoding) return allowed;
    if (name === '*') star = allowed;
  }
  return star;
}
