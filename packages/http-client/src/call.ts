import { randomUUID } from 'node:crypto';
import { formatIdempotencyKey, hashKey, HeaderName } from '@idempotency-chain/idempotency';
import { handleWhen, retry } from 'cockatiel';
import type { Dispatcher } from 'undici';
import { sendAttempt, type AttemptResult } from './attempt';
import { BodyTooLarge } from './bounded-body';
import type { AttemptEvent, AttemptListener } from './attempt-event';
import { CallBudget } from './call-budget';
import type { HttpRequest, HttpResponse } from './client-options';
import { DeadlineExceededError, OutcomeUnknownError, ResponseTooLargeError, RetriesExhaustedError, type LastAttempt } from './errors';
import { keyForAttempt, resolveIntentKey, type KeyPolicy } from './key-policy';
import { currentRequestContext } from './request-context';
import { classifyAttempt, type AttemptClassification } from './retry-classification';
import { retryDelay, type BackoffOptions } from './retry-delay';
import { refuseWait } from './retry-wait';
import { mayRetryWithoutKey } from './unkeyed-retry';

/** A client's settings, defaults applied. */
export interface CallSettings {
  dispatcher: Dispatcher;
  origin: string;
  basePath: string;
  keyPolicy: KeyPolicy;
  attemptTimeoutMs: number;
  maxAttempts: number;
  backoff: Readonly<Required<BackoffOptions>>;
  deadlineMs?: number;
  onAttempt?: AttemptListener;
  maxResponseBytes: number;
  retryUnkeyed: boolean;
  forwardUnboundKey: boolean;
  /** Sent on every call, lower-case names (see `IdempotentClientOptions.headers`). */
  headers: Record<string, string>;
}

/** A transport failure, classified; cockatiel retries it when `retryable`. */
class AttemptFailed extends Error {
  constructor(
    readonly classification: AttemptClassification,
    cause: unknown,
  ) {
    super(classification.outcome, { cause });
  }
}

/**
 * One logical call: the key is resolved here, once, before cockatiel's retry
 * loop starts — the whole point of this package.
 *
 * ```text
 * resolve key ─┬─ attempt 1 ── classify ── wait (Retry-After | jittered backoff) ─┐
 * start budget │  attempt 2 ── classify ── wait ───────────────────────────────── ┤
 *              └─ ... until an answer, the attempt cap, or the deadline ──────────┘
 * ```
 *
 * A wait is slept only when it leads somewhere: a `Retry-After` longer than
 * `backoff.maxRetryAfterMs`, or any wait that reaches the deadline, ends the
 * call at once (`refuseWait`).
 *
 * An attempt's event is held until cockatiel decides whether another attempt
 * follows, so `retried` is known when the event is reported.
 *
 * An unknown outcome of an attempt sent without a key is retried only when
 * `mayRetryWithoutKey` allows it; otherwise the call ends with
 * `OutcomeUnknownError`.
 */
export async function runCall<T>(settings: CallSettings, request: HttpRequest): Promise<HttpResponse<T>> {
  const context = currentRequestContext();
  const budget = CallBudget.start(Date.now(), settings.deadlineMs, context?.deadline);
  const intentKey = resolveIntentKey(settings.keyPolicy, {
    ...request,
    inboundKey: context?.key,
    hop: context?.hop,
    forwardUnboundKey: settings.forwardUnboundKey,
  });
  const method = request.method.toUpperCase();
  const label = `${method} ${request.path}`;
  const { body, contentType } = encodeBody(request.body);
  const callId = randomUUID();
  let attempts = 0;
  let sentKey: string | undefined;
  let last: LastAttempt = { attempts: 0 };
  let pending: Omit<AttemptEvent, 'retried'> | undefined;
  let unkeyedStop = false; // an unknown outcome that may not be retried: no key, unsafe method

  // The retry rule's verdict, unless the attempt carried no key and a retry could run it twice.
  const verdict = (classification: AttemptClassification): AttemptClassification => {
    unkeyedStop =
      classification.retryable && sentKey === undefined && !mayRetryWithoutKey(method, classification.outcome, settings.retryUnkeyed);
    return unkeyedStop ? { ...classification, retryable: false } : classification;
  };

  const report = (retried: boolean, waitMs?: number) => {
    if (pending) emit(settings.onAttempt, { ...pending, retried, ...(waitMs !== undefined && { waitMs }) });
    pending = undefined;
  };
  const deadlineError = () => new DeadlineExceededError(budget.limit ?? 'deadline', label, last);

  const policy = retry(
    handleWhen((error) => error instanceof AttemptFailed && error.classification.retryable).orWhenResult(
      (result) => (result as AttemptResult).retryable,
    ),
    {
      maxAttempts: settings.maxAttempts - 1,
      backoff: retryDelay(settings.backoff, (wait) => {
        const refusal = refuseWait(wait, settings.backoff.maxRetryAfterMs, budget, Date.now());
        report(refusal === undefined, refusal === undefined ? wait.ms : undefined);
        if (refusal === 'deadline') throw deadlineError(); // never sleep into (or past) the deadline
        if (refusal === 'too-long') {
          const asked = `a Retry-After of ${wait.ms} ms (more than backoff.maxRetryAfterMs, ${settings.backoff.maxRetryAfterMs} ms)`;
          throw new RetriesExhaustedError(label, last, asked);
        }
      }),
    },
  );

  const attempt = async (): Promise<AttemptResult> => {
    const startedAt = Date.now();
    if (budget.remaining(startedAt) <= 0) throw deadlineError(); // no attempt starts after the deadline
    attempts += 1;
    sentKey = keyForAttempt(settings.keyPolicy, intentKey, attempts);
    const timeout = budget.attemptTimeout(settings.attemptTimeoutMs, startedAt);
    const headers: Record<string, string> = {
      ...(contentType !== undefined && { 'content-type': contentType }),
      ...settings.headers,
      ...lowerCaseNames(request.headers),
      [HeaderName.RequestAttempt]: String(attempts),
      [HeaderName.RequestTimeout]: String(Math.floor(timeout.ms)),
      ...(sentKey !== undefined && { [HeaderName.IdempotencyKey]: formatIdempotencyKey(sentKey) }),
    };
    const event = { callId, method, path: request.path, attempt: attempts, startedAt };
    const keyHash = sentKey === undefined ? {} : { keyHash: hashKey(sentKey) };
    try {
      const response = await sendAttempt({
        dispatcher: settings.dispatcher,
        origin: settings.origin,
        path: settings.basePath + request.path,
        method,
        headers,
        ...(body !== undefined && { body }),
        timeoutMs: timeout.ms,
        byDeadline: timeout.byDeadline,
        maxBodyBytes: settings.maxResponseBytes,
      });
      const { outcome, retryable } = verdict(classifyAttempt(response)!);
      last = { attempts, outcome, status: response.status, response };
      pending = { ...event, ...keyHash, outcome, status: response.status, replayed: response.replayed, durationMs: Date.now() - startedAt };
      return { response, retryable };
    } catch (error) {
      if (error instanceof BodyTooLarge) {
        // An answer, not an unknown outcome: the server would send it again, so it is not retried.
        last = { attempts, outcome: 'too-large', status: error.status, cause: error };
        pending = { ...event, ...keyHash, outcome: 'too-large', status: error.status, durationMs: Date.now() - startedAt };
        throw new ResponseTooLargeError(label, last, error.maxBytes);
      }
      const found = classifyAttempt({ error });
      if (found === undefined) throw error; // not an HTTP outcome: a bug or a closed client
      const classification = verdict(found);
      last = { attempts, outcome: classification.outcome, cause: error };
      pending = { ...event, ...keyHash, outcome: classification.outcome, durationMs: Date.now() - startedAt };
      throw new AttemptFailed(classification, error);
    }
  };

  let result: AttemptResult;
  try {
    result = await policy.execute(attempt);
  } catch (error) {
    report(false);
    if (!(error instanceof AttemptFailed)) throw error;
    if (unkeyedStop) throw new OutcomeUnknownError(label, last);
    throw error.classification.retryable ? new RetriesExhaustedError(label, last) : deadlineError();
  }
  report(false);
  if (unkeyedStop) throw new OutcomeUnknownError(label, last);
  if (result.retryable) throw new RetriesExhaustedError(label, last);
  const { status, headers, body: responseBody, replayed } = result.response;
  return { status, headers, body: responseBody as T, attempts, replayed, ...(sentKey !== undefined && { key: sentKey }) };
}

function encodeBody(body: unknown): { body?: string | Uint8Array; contentType?: string } {
  if (body === undefined) return {};
  if (typeof body === 'string') return { body, contentType: 'text/plain; charset=utf-8' };
  if (body instanceof Uint8Array) return { body, contentType: 'application/octet-stream' };
  return { body: JSON.stringify(body), contentType: 'application/json' };
}

/** `headers` with lower-case names, so that a later spread of the same header replaces it. */
export function lowerCaseNames(headers: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
}

// A listener is an observer: its failure must not change the call's outcome.
function emit(listener: AttemptListener | undefined, event: AttemptEvent): void {
  try {
    listener?.(event);
  } catch {
    /* swallowed on purpose */
  }
}
