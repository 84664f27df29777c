import { isUtf8 } from 'node:buffer';
import type { IdempotencyError } from '../../errors';
import { problemOf } from '../problem-details';

/** An HTTP answer as it went on the wire: what is stored, and what a replay sends. */
export interface HttpAnswer {
  status: number;
  /** Lower-case names; only the headers that belong to the answer (see `DEFAULT_REPLAY_HEADERS`). */
  headers: Record<string, string | string[]>;
  /** Text as the app wrote it (sent as UTF-8, as Node sends a string), or bytes. */
  body: string | Buffer;
}

/** The body's length on the wire, in bytes. */
export function byteLength(body: string | Buffer): number {
  return typeof body === 'string' ? Buffer.byteLength(body) : body.length;
}

/**
 * An answer as one string, the form stores keep: a JSON head line, then the
 * body as it was - UTF-8 text as is, anything else (binary, or text with a
 * NUL, which PostgreSQL's `text` refuses) in base64.
 *
 * ```text
 * {"status":201,"headers":{"content-type":"application/json; charset=utf-8"}}\n{"chargeId":"ch_1"}
 * ```
 */
export function encodeAnswer({ status, headers, body }: HttpAnswer): string {
  const text = typeof body === 'string' ? !body.includes('\u0000') : isUtf8(body) && !body.includes(0);
  const head = JSON.stringify(text ? { status, headers } : { status, headers, base64: true });
  if (typeof body === 'string') return `${head}\n${text ? body : Buffer.from(body).toString('base64')}`;
  return `${head}\n${body.toString(text ? 'utf8' : 'base64')}`;
}

/** The answer {@link encodeAnswer} stored. */
export function decodeAnswer(stored: string): HttpAnswer {
  const newline = stored.indexOf('\n');
  const head = JSON.parse(newline < 0 ? stored : stored.slice(0, newline)) as Omit<HttpAnswer, 'body'> & { base64?: boolean };
  const body = newline < 0 ? '' : stored.slice(newline + 1);
  return { status: head.status, headers: head.headers, body: head.base64 ? Buffer.from(body, 'base64') : body };
}

/** An error of this package as a whole HTTP answer: its problem document, with `Retry-After` where it says when to retry. */
export function problemAnswer(error: IdempotencyError): HttpAnswer {
  const { status, headers, document } = problemOf(error);
  return { status, headers: { 'content-type': 'application/problem+json', ...headers }, body: JSON.stringify(document) };
}
