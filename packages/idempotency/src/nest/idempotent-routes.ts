import { Inject, Injectable, Logger, type ExecutionContext, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { IdempotencyCoordinator } from '../coordinator';
import type { OperationPolicy } from '../policy';
import { IDEMPOTENT_METADATA, NEST_METADATA, RPC_PATTERN_METADATA } from './idempotency.constants';
import { IDEMPOTENCY_MODULE_OPTIONS } from './idempotency.module-definition';
import type { IdempotencyModuleOptions, IdempotentMetadata, KeyMode } from './idempotency.options';
import { principalScope, type ScopeResolver } from './scope';

/** One `@Idempotent` handler of one controller, everything about it decided once. */
export interface IdempotentRoute {
  operation: string;
  keyMode: KeyMode;
  fingerprintFields: readonly string[] | undefined;
  /** `undefined`: one shared scope. */
  scope: ScopeResolver | undefined;
  policy: OperationPolicy;
  /** A message handler's pattern, as the fingerprint's path. */
  pattern: string | undefined;
  /** The handler writes its response itself (`@Res()` without passthrough, `@Next()`): nothing else renders it. */
  writesItself: boolean;
}

/** `RouteParamtypes.RESPONSE` and `.NEXT` in Nest's route argument metadata keys (`"1:0"`). */
const RESPONSE = '1';
const NEXT = '2';

/**
 * Every `@Idempotent` route of the app, resolved at boot: its metadata read,
 * its policy merged over the operation's and the service's and checked, its
 * scope decided. A policy that could run one key twice (a heartbeat as long
 * as the lease, say) stops the app here, naming the route and the option,
 * and a request pays for a map lookup instead of all of that. Keyed by the
 * controller and the handler: one handler inherited by two controllers is
 * two routes.
 */
@Injectable()
export class IdempotentRoutes implements OnModuleInit {
  private readonly routes = new Map<Function, Map<Function, IdempotentRoute | null>>();
  private readonly logger = new Logger('IdempotencyModule');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly coordinator: IdempotencyCoordinator,
    @Inject(IDEMPOTENCY_MODULE_OPTIONS) private readonly options: IdempotencyModuleOptions,
  ) {}

  onModuleInit(): void {
    if (this.options.scope === undefined) {
      this.logger.warn(
        `${this.options.service}: no idempotency scope decided. Records are scoped by the authenticated principal ` +
          "(request.user), and a request without one is refused. Set `scope` to a resolver of the caller's " +
          "principal or tenant, or to 'shared' when every caller may share keys.",
      );
    }
    for (const { instance, metatype } of this.discovery.getControllers()) {
      if (!instance || !metatype) continue;
      const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const handler = prototype[name];
        if (typeof handler === 'function') this.of(handler, metatype as Function);
      }
    }
  }

  /** The route `context` is running, or `undefined` when it is not `@Idempotent`. */
  route(context: ExecutionContext): IdempotentRoute | undefined {
    return this.of(context.getHandler(), context.getClass());
  }

  private of(handler: Function, controller: Function): IdempotentRoute | undefined {
    let handlers = this.routes.get(controller);
    if (!handlers) this.routes.set(controller, (handlers = new Map()));
    let route = handlers.get(handler);
    if (route === undefined) handlers.set(handler, (route = this.resolve(handler, controller)));
    return route ?? undefined;
  }

  private resolve(handler: Function, controller: Function): IdempotentRoute | null {
    const metadata = this.reflector.getAllAndOverride<IdempotentMetadata | undefined>(IDEMPOTENT_METADATA, [handler, controller]);
    if (!metadata || Reflect.hasOwnMetadata(NEST_METADATA.sse, handler)) return null;
    let policy: OperationPolicy;
    try {
      policy = this.coordinator.policyFor(metadata.operation, metadata.policy);
    } catch (error) {
      throw Object.assign(error as Error, { message: `@Idempotent on ${controller.name}.${handler.name}: ${(error as Error).message}` });
    }
    const scope = metadata.scope ?? this.options.scope ?? principalScope;
    const pattern = this.reflector.get<unknown[] | undefined>(RPC_PATTERN_METADATA, handler)?.[0];
    return {
      operation: metadata.operation,
      keyMode: metadata.keyMode ?? this.options.keyMode ?? 'required',
      fingerprintFields: metadata.fingerprintFields,
      scope: scope === 'shared' ? undefined : scope,
      policy,
      pattern: pattern === undefined ? undefined : typeof pattern === 'string' ? pattern : JSON.stringify(pattern),
      writesItself: writesItself(controller, handler.name),
    };
  }
}

/** Nest renders nothing for a handler that takes the response (or `next`) without passthrough. */
function writesItself(controller: Function, method: string): boolean {
  const args = Object.keys(Reflect.getMetadata(NEST_METADATA.routeArguments, controller, method) ?? {});
  const takesResponse = args.some((key) => [RESPONSE, NEXT].includes(key.split(':')[0] as string));
  return takesResponse && Reflect.getMetadata(NEST_METADATA.responsePassthrough, controller, method) !== true;
}
