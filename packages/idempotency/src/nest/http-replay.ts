import type { ServerResponse } from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { HeaderName } from '../header-name';
import { replaceResponse } from './held-response';
import type { HttpAnswer } from './http-answer';

const DECODERS: Record<string, (body: Buffer) => Buffer> = { gzip: gunzipSync, 'x-gzip': gunzipSync, deflate: inflateSync, br: brotliDecompressSync };

/**
 * Send a stored answer as the answer to this request. Whatever the app's
 * pipeline renders is replaced by the stored bytes (see `replaceResponse`);
 * a route that writes its response itself (`@Res()` without passthrough)
 * renders nothing, so the answer is written at once.
 *
 * A body the app compressed (a compression hook before the answer was
 * stored) is decompressed for a client that does not accept its encoding.
 */
export function sendReplay(raw: ServerResponse, stored: HttpAnswer, acceptEncoding: string | string[] | undefined, writesItself: boolean): void {
  const answer = acceptable(stored, acceptEncoding);
  if (!writesItself) return replaceResponse(raw, answer);
  raw.statusCode = answer.status;
  for (const name in answer.headers) raw.setHeader(name, answer.headers[name] as string | string[]);
  raw.setHeader(HeaderName.Replayed, 'true');
  raw.end(answer.body);
}

function acceptable(answer: HttpAnswer, acceptEncoding: string | string[] | undefined): HttpAnswer {
  const encoding = answer.headers['content-encoding'];
  if (typeof encoding !== 'string' || encoding === 'identity' || accepts(acceptEncoding, encoding.toLowerCase())) return answer;
  const decode = DECODERS[encoding.toLowerCase()];
  if (!decode || typeof answer.body === 'string') return answer; // compressed bytes are never stored as text
  const { 'content-encoding': _encoding, ...headers } = answer.headers;
  return { status: answer.status, headers, body: decode(answer.body) };
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
