import {
  CallHandler,
  ExecutionContext,
  HttpException,
  HttpStatus,
  Inject,
  Injectable,
  NestInterceptor,
} from '@nestjs/common';
import { HTTP_CODE_METADATA } from '@nestjs/common/constants';
import { HttpAdapterHost, Reflector } from '@nestjs/core';
import { defer, lastValueFrom, type Observable } from 'rxjs';
import { IdempotencyCoordinator, type RunRequest } from '../coordinator';
import { InvalidKeyError, MissingKeyError } from '../errors';
import { pickFields, requestFingerprint } from '../fingerprint';
import { Headers } from '../headers';
import { parseIdempotencyKey } from '../key';
import { IDEMPOTENT_METADATA, RPC_PATTERN_METADATA } from './idempotency.constants';
import { executionStorage } from './idempotency-execution';
import { IDEMPOTENCY_MODULE_OPTIONS } from './idempotency.module-definition';
import type { IdempotencyModuleOptions, IdempotentMetadata } from './idempotency.options';
import {
  disconnectSignal,
  requestDeadline,
  routeTemplate,
  rpcBody,
  rpcKey,
  type HttpRequestLike,
} from './idempotency-request';

/** What an HTTP execution stores: the status and body the client got. */
export interface StoredResponse {
  statusCode: number;
  body: unknown;
}

/**
 * Runs `@Idempotent` handlers through the coordinator, over HTTP (Fastify and
 * Express) and RPC. Everything that can refuse a request (key, fingerprint,
 * scope) is decided before the claim, so a refused request leaves no record.
 *
 * An HTTP handler's `HttpException` is stored as a response (`isFinal` decides
 * whether it is kept) and re-thrown, first time and on replay alike, so the
 * exception filter renders both the same; any other error releases the key.
 * Override `resolveKey`, `fingerprintOf` or `scopeOf` to change how a request
 * is identified.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly coordinator: IdempotencyCoordinator,
    private readonly reflector: Reflector,
    private readonly adapterHost: HttpAdapterHost,
    @Inject(IDEMPOTENCY_MODULE_OPTIONS) private readonly options: IdempotencyModuleOptions,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const metadata = this.reflector.getAllAndOverride<IdempotentMetadata | undefined>(IDEMPOTENT_METADATA, [
      context.getHandler(),
      context.getClass(),
    ]);
    const keyMode = metadata?.keyMode ?? this.options.keyMode ?? 'required';
    const isHttp = context.getType() === 'http';
    if (!metadata || keyMode === 'off' || (!isHttp && context.getType() !== 'rpc')) return next.handle();

    // Refused before the claim: a bad key or a missing required one leaves no record.
    const key = this.resolveKey(context);
    if (key === undefined && keyMode === 'required') throw new MissingKeyError('This operation requires an Idempotency-Key');
    if (key === undefined && keyMode === 'optional') return next.handle();
    const fingerprint = this.fingerprintOf(context, metadata);

    const request: RunRequest = {
      operation: metadata.operation,
      key: key ?? fingerprint,
      scope: this.scopeOf(context),
      fingerprint,
      policy: metadata.policy,
    };
    return defer(() => (isHttp ? this.runHttp(context, next, request) : this.runRpc(next, request)));
  }

  /** The validated key of this request, `undefined` when it carries none. */
  protected resolveKey(context: ExecutionContext): string | undefined {
    let raw: unknown;
    if (context.getType() === 'rpc') {
      raw = rpcKey(context.switchToRpc().getData(), context.switchToRpc().getContext());
    } else {
      raw = context.switchToHttp().getRequest<HttpRequestLike>().headers[Headers.IdempotencyKey];
    }
    if (raw === undefined || raw === null) return undefined;
    if (typeof raw !== 'string' && !Array.isArray(raw)) throw new InvalidKeyError('Idempotency-Key must be a string');
    return parseIdempotencyKey(raw as string | string[]);
  }

  /** SHA-256 of method, route template and body (or the route's `fingerprintFields`). */
  protected fingerprintOf(context: ExecutionContext, metadata: IdempotentMetadata): string {
    const pick = (body: unknown) => (metadata.fingerprintFields ? pickFields(body, metadata.fingerprintFields) : body);
    if (context.getType() === 'rpc') {
      const patterns = this.reflector.get<unknown[] | undefined>(RPC_PATTERN_METADATA, context.getHandler());
      const pattern = patterns?.[0] ?? context.getHandler().name;
      const route = typeof pattern === 'string' ? pattern : JSON.stringify(pattern);
      return requestFingerprint({ method: 'RPC', route, body: pick(rpcBody(context.switchToRpc().getData())) });
    }
    const request = context.switchToHttp().getRequest<HttpRequestLike>();
    return requestFingerprint({ method: request.method, route: routeTemplate(request), body: pick(request.body) });
  }

  /** The caller's principal or tenant, from the module's `scope` resolver. */
  protected scopeOf(context: ExecutionContext): string | undefined {
    return this.options.scope?.(context);
  }

  private async runHttp(context: ExecutionContext, next: CallHandler, request: RunRequest): Promise<unknown> {
    const http = context.switchToHttp();
    const response = http.getResponse();
    const successStatus = this.successStatus(context);
    const result = await this.coordinator.run<StoredResponse>(
      { ...request, deadline: requestDeadline(http.getRequest()), signal: disconnectSignal(response) },
      (execution) =>
        // next.handle() is called inside the storage so the handler inherits it.
        executionStorage.run(execution, async (): Promise<StoredResponse> => {
          try {
            return { statusCode: successStatus, body: await lastValueFrom(next.handle(), { defaultValue: undefined }) };
          } catch (error) {
            if (error instanceof HttpException) return { statusCode: error.getStatus(), body: error.getResponse() };
            throw error;
          }
        }),
    );
    const adapter = this.adapterHost.httpAdapter;
    if (result.replayed) adapter.setHeader(response, Headers.Replayed, 'true');
    const { statusCode, body } = result.value;
    if (statusCode >= HttpStatus.BAD_REQUEST) throw new HttpException(body as string | object, statusCode);
    adapter.status(response, statusCode);
    return body;
  }

  private async runRpc(next: CallHandler, request: RunRequest): Promise<unknown> {
    const result = await this.coordinator.run(request, (execution) =>
      executionStorage.run(execution, () => lastValueFrom(next.handle(), { defaultValue: undefined })),
    );
    return result.value;
  }

  /** The status Nest answers a successful call with: `@HttpCode`, else 201 for POST, 200 otherwise. */
  private successStatus(context: ExecutionContext): number {
    const code = this.reflector.get<number | undefined>(HTTP_CODE_METADATA, context.getHandler());
    if (code !== undefined) return code;
    return context.switchToHttp().getRequest<HttpRequestLike>().method === 'POST' ? HttpStatus.CREATED : HttpStatus.OK;
  }
}
