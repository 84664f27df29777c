import type { Dispatcher } from 'undici';
import { HeaderName } from '@idempotency-chain/idempotency';
import { readBoundedBody } from './bounded-body';

/** One attempt, fully resolved: headers set, timeout chosen. */
export interface AttemptRequest {
  dispatcher: Dispatcher;
  origin: string;
  path: string;
  method: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  timeoutMs: number;
  /** The timeout is the call's deadline, not the per-attempt timeout. */
  byDeadline: boolean;
  /** Largest body read, in bytes: past it the attempt fails with `BodyTooLarge`. */
  maxBodyBytes: number;
}

/** What came back, body already read and parsed. */
export interface AttemptResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  replayed: boolean;
}

/** A response and the retry rule's verdict on it: what cockatiel's result filter and backoff see. */
export interface AttemptResult {
  response: AttemptResponse;
  retryable: boolean;
}

/** The abort reason of an attempt whose timer fired: it is what undici rejects with. */
export class AttemptTimedOut extends Error {
  constructor(
    readonly timeoutMs: number,
    readonly byDeadline: boolean,
  ) {
    super(`attempt ${byDeadline ? 'cut short by the call deadline' : 'timed out'} after ${timeoutMs} ms`);
    this.name = 'AttemptTimedOut';
  }
}

/**
 * Send one attempt through undici and read the whole body under the same
 * timeout: a reply that breaks off mid-body is as unknown an outcome as one
 * that never started. The body is read up to `maxBodyBytes`, never further.
 *
 * @throws BodyTooLarge (with the status known) when the body is over `maxBodyBytes`.
 */
export async function sendAttempt(request: AttemptRequest): Promise<AttemptResponse> {
  const controller = new AbortController();
  // A plain timer (not AbortSignal.timeout) so fake timers in tests drive it.
  const timer = setTimeout(() => controller.abort(new AttemptTimedOut(request.timeoutMs, request.byDeadline)), request.timeoutMs);
  try {
    const response = await request.dispatcher.request({
      origin: request.origin,
      path: request.path,
      method: request.method,
      headers: request.headers,
      body: request.body ?? null,
      signal: controller.signal,
    });
    const headers = flattenHeaders(response.headers);
    const text = await readBoundedBody(response, request.maxBodyBytes);
    return {
      status: response.statusCode,
      headers,
      body: parseBody(text, headers['content-type']),
      replayed: headers[HeaderName.Replayed] === 'true',
    };
  } finally {
    clearTimeout(timer);
  }
}

/** JSON for `application/json` and `+json` types (problem documents included), text otherwise. */
function parseBody(text: string, contentType: string | undefined): unknown {
  const isJson = /^application\/(?:[\w.-]+\+)?json\b/i.test(contentType ?? '');
  if (!isJson || text.length === 0) return isJson ? undefined : text;
  try {
    return JSON.parse(text);
  } catch {
    return text; // a server that mislabels its body still answered; hand over what it sent
  }
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}
