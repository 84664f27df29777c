import { Agent } from 'undici';
import { lowerCaseNames, runCall, type CallSettings } from './call';
import { DEFAULT_MAX_RESPONSE_BYTES } from './client-options';
import type { CallOptions, HttpRequest, HttpResponse, IdempotentClientOptions } from './client-options';
import { checkKeyPolicy } from './key-policy';
import { resolveBackoff } from './retry-delay';
import { timerMs } from './timer-limit';

/**
 * An outbound HTTP client whose idempotency key belongs to the intent, not
 * the attempt: resolved once per call (explicit, inbound, derived or fresh),
 * sent on every attempt, retried only when the outcome is unknown, and never
 * past the call's deadline or the caller's.
 *
 * Every attempt sends `request-attempt` (1-based: the server's logs tell a
 * retry from a first attempt) and `request-timeout-ms` (how long this
 * attempt will be waited for), and reports an `AttemptEvent`.
 *
 * @example
 * const payments = new IdempotentHttpClient({ baseUrl: 'http://localhost:3002', deadlineMs: 5_000 });
 * const charge = await payments.post<Charge>('/charges', { orderId, amountCents: 500 });
 * if (charge.status !== 201) throw new Error(`payments said ${charge.status}`);
 *
 * @public
 */
export class IdempotentHttpClient {
  private readonly settings: CallSettings;
  private readonly ownsDispatcher: boolean;

  /**
   * @throws RangeError naming the first option out of range: `maxAttempts`, a
   *   timer value (`attemptTimeoutMs`, `backoff.*`: finite, > 0, at most 2^31-1 ms)
   *   or `deadlineMs` or `maxResponseBytes` (an integer >= 1).
   * @throws TypeError when `keyPolicy` is neither `'propagated'`, `'none'` nor a `KeyStrategy`.
   */
  constructor(options: IdempotentClientOptions) {
    const base = new URL(options.baseUrl);
    const maxAttempts = options.maxAttempts ?? 3;
    // Each attempt arms a timer for its timeout: it must be one Node can keep.
    const attemptTimeoutMs = timerMs('attemptTimeoutMs', options.attemptTimeoutMs ?? 2000);
    const backoff = resolveBackoff(options.backoff);
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw new RangeError('maxAttempts must be an integer >= 1');
    if (options.deadlineMs !== undefined && !(options.deadlineMs > 0)) throw new RangeError('deadlineMs must be > 0');
    const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    if (!Number.isSafeInteger(maxResponseBytes) || maxResponseBytes < 1) throw new RangeError('maxResponseBytes must be an integer >= 1');
    this.ownsDispatcher = options.dispatcher === undefined;
    this.settings = {
      dispatcher: options.dispatcher ?? new Agent({ keepAliveTimeout: 10_000 }),
      origin: base.origin,
      basePath: base.pathname.replace(/\/+$/, ''),
      keyPolicy: checkKeyPolicy(options.keyPolicy ?? 'propagated'),
      attemptTimeoutMs,
      maxAttempts,
      backoff,
      maxResponseBytes,
      retryUnkeyed: options.retryUnkeyed === true,
      forwardUnboundKey: options.forwardUnboundKey === true,
      headers: lowerCaseNames(options.headers),
      ...(options.deadlineMs !== undefined && { deadlineMs: options.deadlineMs }),
      ...(options.onAttempt !== undefined && { onAttempt: options.onAttempt }),
    };
  }

  /**
   * Make one logical call. Resolves with the first non-retryable response of
   * any status (a 422 is an answer, not an error).
   *
   * @example
   * const refund = await payments.request<Refund>({
   *   method: 'PUT',
   *   path: `/charges/${chargeId}/refund`,
   *   body: { amountCents: 500 },
   *   callName: 'refund', // a key of its own, derived from the inbound one
   * });
   *
   * @throws RetriesExhaustedError when every attempt allowed ended in an unknown outcome,
   *   or a `Retry-After` asked for longer than `backoff.maxRetryAfterMs`.
   * @throws OutcomeUnknownError when an unsafe method sent without a key ended in an
   *   unknown outcome, which is not retried unless `retryUnkeyed`.
   * @throws ResponseTooLargeError when the body is over `maxResponseBytes`.
   * @throws DeadlineExceededError when the client's or the inbound deadline left no room.
   * @throws Error, before any attempt, when the key cannot be bound to the caller: an inbound
   *   key no `@Idempotent` route identified (see `forwardUnboundKey`), or a `businessKey`
   *   with neither such a route nor the call's `scope`.
   */
  request<T = unknown>(request: HttpRequest): Promise<HttpResponse<T>> {
    return runCall<T>(this.settings, request);
  }

  /**
   * `POST` with a JSON body.
   *
   * @example
   * const charge = await payments.post<Charge>('/charges', { orderId, amountCents: 500 }, { businessKey: orderId, scope: customerId });
   */
  post<T = unknown>(path: string, body: unknown, options: CallOptions = {}): Promise<HttpResponse<T>> {
    return this.request<T>({ ...options, method: 'POST', path, body });
  }

  /**
   * `GET`. Keyed like any call: the key is harmless on a safe method and keeps diagrams uniform.
   *
   * @example
   * const { body: charge } = await payments.get<Charge>(`/charges/${chargeId}`);
   */
  get<T = unknown>(path: string, options: CallOptions = {}): Promise<HttpResponse<T>> {
    return this.request<T>({ ...options, method: 'GET', path });
  }

  /** Close the dispatcher if the client created it; a dispatcher passed in belongs to its owner. */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.settings.dispatcher.close();
  }

  /**
   * NestJS calls this on shutdown for a client registered as a provider,
   * once the HTTP server has closed and the requests in flight have ended:
   * those requests still call the next hop through it. (`onModuleDestroy`
   * would come first, and a request in flight would fail with a closed client.)
   */
  onApplicationShutdown(): Promise<void> {
    return this.close();
  }
}
