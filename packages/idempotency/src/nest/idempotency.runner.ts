import { Inject, Injectable, type ExecutionContext } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { IdempotencyCoordinator, type RunRequest } from '../coordinator';
import type { Execution } from '../execution';
import { InvalidKeyError, MissingKeyError, ScopeUnresolvedError } from '../errors';
import { pickFields, requestFingerprint } from '../fingerprint';
import { parseIdempotencyKey } from '../key';
import { GraphqlTransport } from './graphql/graphql.transport';
import { HttpTransport } from './http/http.transport';
import { IDEMPOTENCY_MODULE_OPTIONS } from './idempotency.module-definition';
import { moduleSettings, type IdempotencyModuleOptions } from './idempotency.options';
import type { IdempotentDeclaration } from './idempotent-declaration';
import { IdempotentRoutes, type IdempotentRoute } from './idempotent-routes';
import { RpcTransport } from './rpc/rpc.transport';
import type { IdempotencyTransport } from './transport';

/**
 * Runs each call of an `@Idempotent` handler (HTTP on Fastify or Express, a
 * message, or a GraphQL mutation) through the coordinator. Everything that can refuse a request
 * (key, scope, fingerprint) is decided before the claim, so a refused
 * request leaves no record. What differs per transport (where the key is,
 * what the fingerprint covers, how an answer is held, stored and replayed,
 * how an error is answered) is its adapter's (see `http/`, `rpc/` and `graphql/`).
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
  /** This service's name, for the identity of each request (see `requestIdentity`). */
  private readonly service: string;
  /** The adapter of each context type a handler can be protected on. */
  private readonly transports: Partial<Record<string, IdempotencyTransport>>;

  constructor(
    coordinator: IdempotencyCoordinator,
    private readonly routes: IdempotentRoutes,
    adapterHost: HttpAdapterHost,
    @Inject(IDEMPOTENCY_MODULE_OPTIONS) options: IdempotencyModuleOptions,
  ) {
    this.service = options.service;
    const settings = moduleSettings(options);
    this.transports = {
      http: new HttpTransport(coordinator, adapterHost, settings),
      rpc: new RpcTransport(coordinator, settings.maxResponseBytes),
      graphql: new GraphqlTransport(coordinator, settings.maxResponseBytes),
    };
  }

  /**
   * Run the handler `declaration` was declared on (`invoke`, handed its
   * execution) once for this request's key, or answer for it, under the
   * route resolved from it at boot.
   */
  run(context: ExecutionContext, declaration: IdempotentDeclaration, invoke: (execution?: Execution) => unknown): unknown {
    const transport = this.transports[context.getType<string>()];
    if (!transport) {
      // Never silently unprotected: a call of a transport without an adapter has no answer this package can hold or replay.
      throw new TypeError(
        `@Idempotent on ${declaration.name}: a ${context.getType()} call cannot be protected, only HTTP requests, messages and GraphQL mutations`,
      );
    }
    // What the transport, the scope resolver and this runner's hooks see of the call.
    const viewed = transport.view?.(context) ?? context;
    const unsupported = transport.unsupported?.(viewed);
    if (unsupported !== undefined) throw new TypeError(`@Idempotent on ${declaration.name}: ${unsupported}`);
    const route = this.routes.route(viewed.getClass(), declaration);
    if (route.keyMode === 'none') return invoke();
    let request: RunRequest | undefined;
    try {
      request = this.identify(viewed, route, transport);
    } catch (error) {
      throw transport.refusal(error, viewed);
    }
    if (!request) return invoke();
    return transport.run(viewed, route, request, invoke);
  }

  /** The validated key of this request, `undefined` when it carries none. */
  protected resolveKey(context: ExecutionContext): string | undefined {
    const raw = this.transportOf(context).key(context);
    if (raw === undefined || raw === null) return undefined;
    if (typeof raw !== 'string' && !Array.isArray(raw)) throw new InvalidKeyError('Idempotency-Key must be a string');
    return parseIdempotencyKey(raw as string | string[]);
  }

  /** SHA-256 of method, concrete path, query and body (or the route's `fingerprintFields`). */
  protected fingerprintOf(context: ExecutionContext, route: IdempotentRoute): string {
    const input = this.transportOf(context).fingerprint(context, route);
    const fields = route.fingerprintFields;
    return requestFingerprint(fields ? { ...input, body: pickFields(input.body, fields) } : input);
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

  private identify(context: ExecutionContext, route: IdempotentRoute, transport: IdempotencyTransport): RunRequest | undefined {
    const key = this.resolveKey(context);
    if (key === undefined && route.keyMode === 'required') throw new MissingKeyError('This operation requires an Idempotency-Key');
    if (key === undefined && route.keyMode === 'optional') return undefined;
    const scope = this.scopeOf(context, route);
    const fingerprint = this.fingerprintOf(context, route);
    const request: RunRequest = {
      operation: route.operation,
      key: key ?? fingerprint,
      scope,
      fingerprint,
      deadline: transport.deadline(context),
    };
    transport.identified(context, {
      service: this.service,
      operation: route.operation,
      scope,
      key: request.key,
      fingerprinted: key === undefined,
    });
    return request;
  }

  /** The adapter of a context `run` accepted. */
  private transportOf(context: ExecutionContext): IdempotencyTransport {
    return this.transports[context.getType<string>()] as IdempotencyTransport;
  }
}
