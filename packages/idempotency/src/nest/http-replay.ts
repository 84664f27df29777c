import type { ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate, type ZlibOptions } from 'node:zlib';
import { EncodingNotAcceptableError } from '../errors';
import { HeaderName } from '../header-name';
import { replaceResponse } from './held-response';
import type { HttpAnswer } from './http-answer';
import { IdempotencyException, problemAnswer } from './idempotency.exception';

type Decoder = (body: Buffer, options: Pick<ZlibOptions, 'maxOutputLength'>) => Promise<Buffer>;
const gunzipAsync = promisify(gunzip) as Decoder;
const DECODERS: Record<string, Decoder> = { gzip: gunzipAsync, 'x-gzip': gunzipAsync, deflate: promisify(inflate), br: promisify(brotliDecompress) };

/**
 * Send a stored answer as the answer to this request. Whatever the app's
 * pipeline renders is replaced by the stored bytes (see `replaceResponse`);
 * a route that writes its response itself (`@Res()` without passthrough)
 * renders nothing, so the answer is written at once.
 *
 * A body the app compressed (a compression hook before the answer was
 * stored) is decompressed for a client that does not accept its encoding:
 * off the event loop, in zlib's thread pool, and only up to
 * `maxDecodedBytes`, where the decoder is stopped. Past them the client is
 * answered 406 `encoding-not-acceptable` instead: a small stored answer can
 * inflate a thousandfold, and every such replay would cost that much memory
 * again. Resolves once the answer is sent (or set to replace the rendered
 * one); without anything to decode, it is sent at once, with no promise.
 */
export function sendReplay(
  raw: ServerResponse,
  stored: HttpAnswer,
  acceptEncoding: string | string[] | undefined,
  writesItself: boolean,
  maxDecodedBytes: number,
): void | Promise<void> {
  const encoding = encodingToUndo(stored, acceptEncoding);
  if (encoding === undefined) return send(raw, stored, writesItself);
  return (DECODERS[encoding] as Decoder)(stored.body as Buffer, { maxOutputLength: maxDecodedBytes }).then(
    (body) => {
      const { 'content-encoding': _encoding, ...headers } = stored.headers;
      send(raw, { status: stored.status, headers, body }, writesItself);
    },
    (error: { code?: string }) => {
      if (error.code !== 'ERR_BUFFER_TOO_LARGE') return send(raw, stored, writesItself); // not valid in its encoding: as it went out
      const refusal = new EncodingNotAcceptableError(
        `The stored answer is ${encoding}-encoded and larger than ${maxDecodedBytes} bytes decoded: send Accept-Encoding: ${encoding}`,
      );
      send(raw, problemAnswer(new IdempotencyException(refusal)), writesItself);
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
