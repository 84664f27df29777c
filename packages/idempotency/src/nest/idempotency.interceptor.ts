import { CallHandler, ExecutionContext, HttpException, Inject, Injectable, NestInterceptor } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { ServerResponse } from 'node:http';
import { lastValueFrom, Observable, of } from 'rxjs';
import { IdempotencyCoordinator, type Begun, type RunRequest } from '../coordinator';
import { runInExecution } from '../current-execution';
import { InvalidKeyError, MissingKeyError, ResultNotStoredError, ScopeUnresolvedError } from '../errors';
import type { Execution } from '../execution';
import { pickFields, requestFingerprint } from '../fingerprint';
import { HeaderName } from '../header-name';
import { parseIdempotencyKey } from '../key';
import { holdResponse, type Written } from './held-response';
import { decodeAnswer, DEFAULT_REPLAY_HEADERS, encodeAnswer, type HttpAnswer } from './http-answer';
import { IdempotencyException, toHttpException } from './idempotency.exception';
import { IDEMPOTENCY_MODULE_OPTIONS } from './idempotency.module-definition';
import type { IdempotencyModuleOptions } from './idempotency.options';
import { disconnectSignal, rawResponse, requestDeadline, requestTarget, rpcBody, rpcKey, type HttpRequestLike } from './idempotency-request';
import { IdempotentRoutes, type IdempotentRoute } from './idempotent-routes';
import { decodeRpcResult, encodeRpcError, encodeRpcValue } from './rpc-result';

const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;

/** How far a handler got, as the wire answer is judged by it. */
interface HandlerEnd {
  state: 'running' | 'returned' | 'threw' | 'cancelled';
  /** The response status when the handler returned: what the handler (or `@HttpCode`) chose. */
  status: number;
}

/**
 * Runs `@Idempotent` handlers through the coordinator, over HTTP (Fastify and
 * Express) and RPC. Everything that can refuse a request (key, scope,
 * fingerprint) is decided before the claim, so a refused request leaves no
 * record.
 *
 * Over HTTP, what is stored is what went on the wire: the claim is made
 * here, the handler runs, the app's own interceptors, serializers and
 * exception filters render the answer, and the answer is held at the Node
 * response (see `holdResponse`) until the record is completed - or released,
 * when it is not final - so a crash between the two can only mean a replay.
 * A replay sends those stored bytes, whatever the pipeline renders.
 *
 * Override `resolveKey`, `fingerprintOf` or `scopeOf` to change how a request
 * is identified.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private readonly replayHeaders: ReadonlySet<string>;
  private readonly maxResponseBytes: number;

  constructor(
    private readonly coordinator: IdempotencyCoordinator,
    private readonly routes: IdempotentRoutes,
    private readonly adapterHost: HttpAdapterHost,
    @Inject(IDEMPOTENCY_MODULE_OPTIONS) options: IdempotencyModuleOptions,
  ) {
    this.replayHeaders = new Set([...DEFAULT_REPLAY_HEADERS, ...(options.replayHeaders ?? []).map((name) => name.toLowerCase())]);
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  }

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const route = this.routes.of(context);
    const type = context.getType();
    if (!route || route.keyMode === 'off' || (type !== 'http' && type !== 'rpc')) return next.handle();
    let request: RunRequest | undefined;
    try {
      request = this.identify(context, route);
    } catch (error) {
      throw toHttpException(error);
    }
    if (!request) return next.handle();
    return type === 'http' ? this.runHttp(context, next, route, request) : this.runRpc(next, route, request);
  }

  /** The validated key of this request, `undefined` when it carries none. */
  protected resolveKey(context: ExecutionContext): string | undefined {
    let raw: unknown;
    if (context.getType() === 'rpc') {
      raw = rpcKey(context.switchToRpc().getData(), context.switchToRpc().getContext());
    } else {
      raw = context.switchToHttp().getRequest<HttpRequestLike>().headers[HeaderName.IdempotencyKey];
    }
    if (raw === undefined || raw === null) return undefined;
    if (typeof raw !== 'string' && !Array.isArray(raw)) throw new InvalidKeyError('Idempotency-Key must be a string');
    return parseIdempotencyKey(raw as string | string[]);
  }

  /** SHA-256 of method, concrete path, query and body (or the route's `fingerprintFields`). */
  protected fingerprintOf(context: ExecutionContext, route: IdempotentRoute): string {
    const fields = route.fingerprintFields;
    const pick = (body: unknown) => (fields ? pickFields(body, fields) : body);
    if (context.getType() === 'rpc') {
      const path = route.pattern ?? context.getHandler().name;
      return requestFingerprint({ method: 'RPC', path, body: pick(rpcBody(context.switchToRpc().getData())) });
    }
    const request = context.switchToHttp().getRequest<HttpRequestLike>();
    return requestFingerprint({ method: request.method, ...requestTarget(request), body: pick(request.body) });
  }

  /** The caller's principal or tenant (see `Scope`); `''` for a shared scope. */
  protected scopeOf(context: ExecutionContext, route: IdempotentRoute): string {
    if (!route.scope) return '';
    const scope = route.scope(context);
    if (typeof scope !== 'string' || scope === '') {
      throw new ScopeUnresolvedError(
        `No idempotency scope for this request (operation ${route.operation}): it has no authenticated principal, ` +
          "or the app's scope resolver returned nothing. Set IdempotencyModule's `scope`.",
      );
    }
    return scope;
  }

  private identify(context: ExecutionContext, route: IdempotentRoute): RunRequest | undefined {
    const key = this.resolveKey(context);
    if (key === undefined && route.keyMode === 'required') throw new MissingKeyError('This operation requires an Idempotency-Key');
    if (key === undefined && route.keyMode === 'optional') return undefined;
    const scope = this.scopeOf(context, route);
    const fingerprint = this.fingerprintOf(context, route);
    return { operation: route.operation, key: key ?? fingerprint, scope, fingerprint };
  }

  private async runHttp(context: ExecutionContext, next: CallHandler, route: IdempotentRoute, request: RunRequest): Promise<Observable<unknown>> {
    const http = context.switchToHttp();
    const response = http.getResponse<object>();
    const raw = rawResponse(response);
    let signal: AbortSignal | undefined;
    let begun: Begun;
    try {
      begun = await this.coordinator.begin(
        {
          ...request,
          deadline: requestDeadline(http.getRequest<HttpRequestLike>()),
          // Only a request that waits needs to hear of a disconnect.
          get signal() {
            return (signal ??= disconnectSignal(raw));
          },
        },
        route.policy,
      );
    } catch (error) {
      throw this.refusal(error, response);
    }
    const adapter = this.adapterHost.httpAdapter;
    if (begun.replay !== undefined) {
      const answer = decodeAnswer(begun.replay);
      adapter.status(response, answer.status);
      adapter.setHeader(response, HeaderName.Replayed, 'true');
      holdResponse(raw, { maxBytes: 0, discard: true, onWritten: async () => answer });
      return of(null);
    }
    return this.execute(begun.execution, next, raw, route);
  }

  /** Run the handler under `execution`; the held answer then decides what is stored. */
  private execute(execution: Execution, next: CallHandler, raw: ServerResponse, route: IdempotentRoute): Observable<unknown> {
    const end: HandlerEnd = { state: 'running', status: 0 };
    const returned = () => {
      if (end.state === 'running') Object.assign(end, { state: 'returned', status: raw.statusCode });
    };
    holdResponse(raw, { maxBytes: this.maxResponseBytes, onWritten: (written) => this.finish(execution, route, end, written) });
    return new Observable((subscriber) => {
      // Subscribed inside the execution, so the handler and all it awaits see `currentExecution()`.
      const subscription = runInExecution(execution, () =>
        next.handle().subscribe({
          next: (value) => {
            returned();
            subscriber.next(value);
          },
          error: (error: unknown) => {
            if (end.state === 'running') end.state = 'threw';
            subscriber.error(error);
          },
          complete: () => {
            returned();
            subscriber.complete();
          },
        }),
      );
      return () => {
        subscription.unsubscribe();
        // Torn down before an answer (the client left an Observable handler): nothing final happened.
        if (end.state === 'running') {
          end.state = 'cancelled';
          void execution.release();
        }
      };
    });
  }

  /**
   * Judge the answer on the wire and end the execution with it, before it is
   * sent. Stored when final by the operation's rule; also stored - as the
   * error it became - when the handler returned and the answer failed after
   * it (an unserialisable result, an outer interceptor's error): the side
   * effect has happened and must not run again.
   */
  private async finish(execution: Execution, route: IdempotentRoute, end: HandlerEnd, written: Written): Promise<HttpAnswer | undefined> {
    if (!written.whole) {
      const tooLarge = new ResultNotStoredError(`The response body is larger than the ${this.maxResponseBytes} bytes an answer may store`);
      return this.complete(execution, problemAnswer(new IdempotencyException(tooLarge)), tooLarge);
    }
    const answer = { ...written.answer, headers: this.answerHeaders(written.answer.headers) };
    const failedAfterHandler = end.state === 'returned' && answer.status >= 500 && answer.status !== end.status;
    if (failedAfterHandler) {
      return this.complete(execution, answer, new Error(`The handler returned, then the answer failed with ${answer.status}`));
    }
    if (!route.policy.isFinal({ statusCode: answer.status, headers: answer.headers, body: answer.body })) {
      await execution.release();
      return undefined;
    }
    return this.complete(execution, answer);
  }

  /** Store `answer`; when the store refuses (lease lost, unknown commit), answer that instead. */
  private async complete(execution: Execution, answer: HttpAnswer, unstorable?: unknown): Promise<HttpAnswer | undefined> {
    try {
      await execution.complete(encodeAnswer(answer), unstorable);
      return undefined;
    } catch (error) {
      const exception = toHttpException(error);
      if (exception instanceof IdempotencyException) return problemAnswer(exception);
      throw error;
    }
  }

  /** The headers stored with an answer: the replay allow-list only. */
  private answerHeaders(headers: HttpAnswer['headers']): HttpAnswer['headers'] {
    const kept: HttpAnswer['headers'] = {};
    for (const name of Object.keys(headers)) if (this.replayHeaders.has(name)) kept[name] = headers[name] as string;
    return kept;
  }

  /** A refusal as its `HttpException`, with `Retry-After` set on the response for any filter to keep. */
  private refusal(error: unknown, response: object): unknown {
    const exception = toHttpException(error);
    if (exception instanceof IdempotencyException && exception.retryAfterSeconds !== undefined) {
      this.adapterHost.httpAdapter.setHeader(response, 'retry-after', String(exception.retryAfterSeconds));
    }
    return exception;
  }

  private async runRpc(next: CallHandler, route: IdempotentRoute, request: RunRequest): Promise<Observable<unknown>> {
    let begun: Begun;
    try {
      begun = await this.coordinator.begin(request, route.policy);
    } catch (error) {
      throw toHttpException(error);
    }
    if (begun.replay !== undefined) return of(decodeRpcResult(begun.replay));
    const { execution } = begun;
    let value: unknown;
    try {
      value = await runInExecution(execution, () => lastValueFrom(next.handle(), { defaultValue: undefined }));
    } catch (error) {
      const status = error instanceof HttpException ? error.getStatus() : undefined;
      if (status !== undefined && route.policy.isFinal({ statusCode: status })) {
        await this.completeRpc(execution, encodeRpcError(error as HttpException));
      } else {
        await execution.release();
      }
      throw error;
    }
    if (!route.policy.isFinal(value)) {
      await execution.release();
      return of(value);
    }
    const { stored, unstorable } = encodeRpcValue(value);
    await this.completeRpc(execution, stored, unstorable);
    return of(value);
  }

  private async completeRpc(execution: Execution, stored: string, unstorable?: unknown): Promise<void> {
    try {
      await execution.complete(stored, unstorable);
    } catch (error) {
      throw toHttpException(error);
    }
  }
}

/** An error of this package as a whole answer: its problem document and `Retry-After`. */
function problemAnswer(exception: IdempotencyException): HttpAnswer {
  const headers: HttpAnswer['headers'] = { 'content-type': 'application/problem+json' };
  if (exception.retryAfterSeconds !== undefined) headers['retry-after'] = String(exception.retryAfterSeconds);
  return { status: exception.getStatus(), headers, body: Buffer.from(JSON.stringify(exception.getResponse())) };
}
