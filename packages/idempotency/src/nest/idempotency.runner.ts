import { Inject, Injectable, type ExecutionContext } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { IdempotencyCoordinator, type Begun, type RunRequest } from '../coordinator';
import type { Execution } from '../execution';
import { InvalidKeyError, InvalidRequestError, isIdempotencyError, MissingKeyError, ScopeUnresolvedError } from '../errors';
import { pickFields, requestFingerprint } from '../fingerprint';
import { HeaderName } from '../header-name';
import { parseIdempotencyKey } from '../key';
import { noteRequestIdentity } from '../request-identity';
import { DecompressionBudget } from './decompression-budget';
import { HttpExecution, type AnswerLimits } from './http-execution';
import { decodeAnswer } from './http-answer';
import { sendReplay, type ReplayDecompression } from './http-replay';
import { toHttpException } from './idempotency.exception';
import { problemOf } from './problem-details';
import { IDEMPOTENCY_MODULE_OPTIONS } from './idempotency.module-definition';
import { moduleSettings, type IdempotencyModuleOptions } from './idempotency.options';
import {
  disconnectSignal,
  hasBody,
  rawResponse,
  requestDeadline,
  requestTarget,
  rpcBody,
  rpcKey,
  uploadedFiles,
  type HttpRequestLike,
} from './idempotency-request';
import { IdempotentRoutes, type IdempotentRoute } from './idempotent-routes';
import type { ProtectedHandler } from './protected-handlers';
import { runRpc, toRpcError } from './rpc-execution';

/**
 * Runs each call of an `@Idempotent` handler (HTTP on Fastify or Express, or
 * a message) through the coordinator. Everything that can refuse a request
 * (key, scope, fingerprint) is decided before the claim, so a refused
 * request leaves no record.
 *
 * Over HTTP, what is stored is what went on the wire: the claim is made
 * here, the handler runs, the app's own interceptors, serializers and
 * exception filters render the answer, and the answer is held at the Node
 * response until the record is completed - or released, when it is not
 * final - so a crash between the two can only mean a replay (see
 * `HttpExecution`). A replay sends those stored bytes, whatever the pipeline
 * renders.
 *
 * Extend it and override `resolveKey`, `fingerprintOf` or `scopeOf` (provide
 * the subclass as `IdempotencyRunner`) to change how a request is identified.
 * A subclass with a constructor of its own takes and passes on every
 * argument of this one.
 *
 * @beta
 */
@Injectable()
export class IdempotencyRunner {
  /** What every HTTP execution stores of its answer. */
  private readonly answers: AnswerLimits;
  /** What replays decompress for clients that do not accept a stored encoding. */
  private readonly decompression: ReplayDecompression;
  /** This service's name, for the identity of each request (see `requestIdentity`). */
  private readonly service: string;

  constructor(
    private readonly coordinator: IdempotencyCoordinator,
    private readonly routes: IdempotentRoutes,
    private readonly adapterHost: HttpAdapterHost,
    @Inject(IDEMPOTENCY_MODULE_OPTIONS) options: IdempotencyModuleOptions,
  ) {
    this.service = options.service;
    const { maxResponseBytes, replayHeaders, maxDecompressingBytes } = moduleSettings(options);
    this.answers = { replayHeaders, maxResponseBytes };
    this.decompression = { maxBytes: maxResponseBytes, budget: new DecompressionBudget(maxDecompressingBytes) };
  }

  /** Run `handler` (`invoke`, handed its execution) once for this request's key, or answer for it. */
  run(context: ExecutionContext, handler: ProtectedHandler, invoke: (execution?: Execution) => unknown): unknown {
    const type = context.getType();
    if (type !== 'http' && type !== 'rpc') {
      // Never silently unprotected: a WebSocket or GraphQL call has no answer this package can hold or replay.
      throw new TypeError(`@Idempotent on ${handler.name}: a ${type} call cannot be protected, only HTTP requests and messages`);
    }
    const route = this.routes.route(context.getClass(), handler);
    if (route.keyMode === 'none') return invoke();
    let request: RunRequest | undefined;
    try {
      request = this.identify(context, route);
    } catch (error) {
      throw type === 'http' ? toHttpException(error) : toRpcError(error);
    }
    if (!request) return invoke();
    return type === 'http' ? this.runHttp(context, route, request, invoke) : runRpc(this.coordinator, route, request, invoke);
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
    let body = request.body;
    if (body === undefined && hasBody(request)) {
      // Nothing parsed it (no body parser for its content type): a
      // fingerprint without it would replay another amount's answer.
      if (!Buffer.isBuffer(request.rawBody)) {
        throw new InvalidRequestError(
          `The request body of ${route.operation} was not parsed, so it cannot be fingerprinted: ` +
            'register a body parser for its content type, or enable rawBody',
        );
      }
      body = request.rawBody;
    }
    return requestFingerprint({ method: request.method, ...requestTarget(request), body: pick(body), files: uploadedFiles(request) });
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
    const request = { operation: route.operation, key: key ?? fingerprint, scope, fingerprint };
    if (context.getType() === 'http') {
      // For the calls the handler makes: keyed from this record, they carry the caller it came from.
      const identity = { service: this.service, operation: route.operation, scope, key: request.key, fingerprinted: key === undefined };
      noteRequestIdentity(context.switchToHttp().getRequest<object>(), identity);
    }
    return request;
  }

  /**
   * A replay this process already knows is answered at once, with no
   * promise in between: most retries of a key are replays, and this is
   * their whole cost.
   */
  private runHttp(
    context: ExecutionContext,
    route: IdempotentRoute,
    request: RunRequest,
    invoke: (execution?: Execution) => unknown,
  ): unknown {
    const http = context.switchToHttp();
    const response = http.getResponse<object>();
    // The handler called again within this request (an interceptor's retry()): never a claim that would wait for itself.
    const holder = HttpExecution.holding(rawResponse(response));
    if (holder) return holder.again(invoke);
    let known: string | undefined;
    try {
      known = this.coordinator.replayFromMemory(request);
    } catch (error) {
      throw this.refusal(error, response);
    }
    if (known !== undefined) return this.replay(known, http.getRequest<HttpRequestLike>(), response, route);
    return this.beginHttp(http.getRequest<HttpRequestLike>(), response, route, request, invoke);
  }

  private async beginHttp(
    incoming: HttpRequestLike,
    response: object,
    route: IdempotentRoute,
    request: RunRequest,
    invoke: (execution?: Execution) => unknown,
  ): Promise<unknown> {
    const raw = rawResponse(response);
    request.deadline = requestDeadline(incoming);
    // Only a request that waits needs to hear of a disconnect.
    request.signal = () => disconnectSignal(raw);
    let begun: Begun;
    try {
      begun = await this.coordinator.begin(request, route.policy);
    } catch (error) {
      throw this.refusal(error, response);
    }
    if (begun.replay !== undefined) return this.replay(begun.replay, incoming, response, route);
    const execution = new HttpExecution(begun.execution, raw, route, this.answers, this.coordinator.executions);
    return execution.invoke(invoke);
  }

  /**
   * Answer with a stored answer, whatever the app's pipeline renders (see
   * `sendReplay`): at once, or once its body is decompressed for a client
   * that does not accept its encoding.
   */
  private replay(stored: string, incoming: HttpRequestLike, response: object, route: IdempotentRoute): null | Promise<null> {
    const answer = decodeAnswer(stored);
    const adapter = this.adapterHost.httpAdapter;
    adapter.status(response, answer.status);
    adapter.setHeader(response, HeaderName.Replayed, 'true');
    const sent = sendReplay(rawResponse(response), answer, incoming.headers['accept-encoding'], route.writesItself, this.decompression);
    return sent ? sent.then(() => null) : null;
  }

  /** A refusal as its `HttpException`, with `Retry-After` set on the response for any filter to keep. */
  private refusal(error: unknown, response: object): unknown {
    if (!isIdempotencyError(error)) return error;
    for (const [name, value] of Object.entries(problemOf(error).headers)) this.adapterHost.httpAdapter.setHeader(response, name, value);
    return toHttpException(error);
  }
}
