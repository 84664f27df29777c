import type { ExecutionContext } from '@nestjs/common';
import type { HttpAdapterHost } from '@nestjs/core';
import type { Begun, IdempotencyCoordinator, RunRequest } from '../../coordinator';
import { InvalidRequestError, isIdempotencyError } from '../../errors';
import type { Execution } from '../../execution';
import type { FingerprintInput } from '../../fingerprint';
import { HeaderName } from '../../header-name';
import { noteRequestIdentity, type RequestIdentity } from '../../request-identity';
import { toHttpException } from '../idempotency.exception';
import type { ModuleSettings } from '../idempotency.options';
import type { IdempotentRoute } from '../idempotent-routes';
import { problemOf } from '../problem-details';
import type { IdempotencyTransport } from '../transport';
import { DecompressionBudget } from './decompression-budget';
import { decodeAnswer } from './http-answer';
import { HttpExecution, type AnswerLimits } from './http-execution';
import { sendReplay, type ReplayDecompression } from './http-replay';
import {
  disconnectSignal,
  hasBody,
  rawResponse,
  requestDeadline,
  requestTarget,
  uploadedFiles,
  type HttpRequestLike,
} from './http-request';

/**
 * HTTP requests on Fastify or Express. What is stored is what went on the
 * wire: the claim is made here, the handler runs, the app's own
 * interceptors, serializers and exception filters render the answer, and
 * the answer is held at the Node response until the record is completed -
 * or released, when it is not final - so a crash between the two can only
 * mean a replay (see `HttpExecution`). A replay sends those stored bytes,
 * whatever the pipeline renders (see `sendReplay`).
 */
export class HttpTransport implements IdempotencyTransport {
  /** What every HTTP execution stores of its answer. */
  private readonly answers: AnswerLimits;
  /** What replays decompress for clients that do not accept a stored encoding. */
  private readonly decompression: ReplayDecompression;

  constructor(
    private readonly coordinator: IdempotencyCoordinator,
    private readonly adapterHost: HttpAdapterHost,
    settings: ModuleSettings,
  ) {
    const { maxResponseBytes, replayHeaders, maxDecompressingBytes } = settings;
    this.answers = { replayHeaders, maxResponseBytes };
    this.decompression = { maxBytes: maxResponseBytes, budget: new DecompressionBudget(maxDecompressingBytes) };
  }

  key(context: ExecutionContext): unknown {
    return context.switchToHttp().getRequest<HttpRequestLike>().headers[HeaderName.IdempotencyKey];
  }

  /** Method, concrete path, query, body and uploaded files. */
  fingerprint(context: ExecutionContext, route: IdempotentRoute): FingerprintInput {
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
    return { method: request.method, ...requestTarget(request), body, files: uploadedFiles(request) };
  }

  deadline(context: ExecutionContext): number | undefined {
    return requestDeadline(context.switchToHttp().getRequest<HttpRequestLike>());
  }

  /** For the calls the handler makes: keyed from this record, they carry the caller it came from. */
  identified(context: ExecutionContext, identity: RequestIdentity): void {
    noteRequestIdentity(context.switchToHttp().getRequest<object>(), identity);
  }

  /**
   * A replay this process already knows is answered at once, with no
   * promise in between: most retries of a key are replays, and this is
   * their whole cost.
   */
  run(context: ExecutionContext, route: IdempotentRoute, request: RunRequest, invoke: (execution?: Execution) => unknown): unknown {
    const http = context.switchToHttp();
    const response = http.getResponse<object>();
    // The handler called again within this request (an interceptor's retry()): never a claim that would wait for itself.
    const holder = HttpExecution.holding(rawResponse(response));
    if (holder) return holder.again(invoke);
    let known: string | undefined;
    try {
      known = this.coordinator.replayFromMemory(request);
    } catch (error) {
      throw this.refusal(error, context);
    }
    if (known !== undefined) return this.replay(known, http.getRequest<HttpRequestLike>(), response, route);
    return this.begin(context, route, request, invoke);
  }

  private async begin(
    context: ExecutionContext,
    route: IdempotentRoute,
    request: RunRequest,
    invoke: (execution?: Execution) => unknown,
  ): Promise<unknown> {
    const http = context.switchToHttp();
    const response = http.getResponse<object>();
    const raw = rawResponse(response);
    // Only a request that waits needs to hear of a disconnect.
    request.signal = () => disconnectSignal(raw);
    let begun: Begun;
    try {
      begun = await this.coordinator.begin(request, route.policy);
    } catch (error) {
      throw this.refusal(error, context);
    }
    if (begun.replay !== undefined) return this.replay(begun.replay, http.getRequest<HttpRequestLike>(), response, route);
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

  /** A library error as its `IdempotencyException`, with its headers (`Retry-After`) set on the response for any filter to keep. */
  refusal(error: unknown, context: ExecutionContext): unknown {
    if (!isIdempotencyError(error)) return error;
    const response = context.switchToHttp().getResponse<object>();
    for (const [name, value] of Object.entries(problemOf(error).headers)) this.adapterHost.httpAdapter.setHeader(response, name, value);
    return toHttpException(error);
  }
}
