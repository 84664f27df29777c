import { Inject, Injectable, Logger, type ExecutionContext, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { IdempotencyCoordinator } from '../coordinator';
import type { OperationPolicy } from '../policy';
import { IDEMPOTENT_METADATA, RPC_PATTERN_METADATA } from './idempotency.constants';
import { IDEMPOTENCY_MODULE_OPTIONS } from './idempotency.module-definition';
import type { IdempotencyModuleOptions, IdempotentMetadata, KeyMode } from './idempotency.options';
import { principalScope, type ScopeResolver } from './scope';

/** One `@Idempotent` handler, everything about it decided once. */
export interface IdempotentRoute {
  operation: string;
  keyMode: KeyMode;
  fingerprintFields: readonly string[] | undefined;
  /** `undefined`: one shared scope. */
  scope: ScopeResolver | undefined;
  policy: OperationPolicy;
  /** A message handler's pattern, as the fingerprint's path. */
  pattern: string | undefined;
}

/**
 * Every `@Idempotent` route of the app, resolved at boot: its metadata read,
 * its policy merged over the operation's and the service's and checked, its
 * scope decided. A policy that could run one key twice (a heartbeat as long
 * as the lease, say) stops the app here, naming the route and the option,
 * and a request pays for a map lookup instead of all of that.
 */
@Injectable()
export class IdempotentRoutes implements OnModuleInit {
  private readonly routes = new Map<Function, IdempotentRoute>();
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
    for (const wrapper of this.discovery.getControllers()) {
      const { instance, metatype } = wrapper;
      if (!instance || !metatype) continue;
      const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const handler = prototype[name];
        if (typeof handler === 'function') this.resolve(handler, metatype as Function);
      }
    }
  }

  /** The route `context` is running, or `undefined` when it is not `@Idempotent`. */
  of(context: ExecutionContext): IdempotentRoute | undefined {
    const handler = context.getHandler();
    return this.routes.get(handler) ?? this.resolve(handler, context.getClass());
  }

  private resolve(handler: Function, controller: Function): IdempotentRoute | undefined {
    const metadata = this.reflector.getAllAndOverride<IdempotentMetadata | undefined>(IDEMPOTENT_METADATA, [handler, controller]);
    if (!metadata) return undefined;
    const where = `${controller.name}.${handler.name} (${metadata.operation})`;
    let policy: OperationPolicy;
    try {
      policy = this.coordinator.policyFor(metadata.operation, metadata.policy);
    } catch (error) {
      throw Object.assign(error as Error, { message: `@Idempotent on ${where}: ${(error as Error).message}` });
    }
    const scope = metadata.scope ?? this.options.scope ?? principalScope;
    const patterns = this.reflector.get<unknown[] | undefined>(RPC_PATTERN_METADATA, handler);
    const pattern = patterns?.[0];
    const route: IdempotentRoute = {
      operation: metadata.operation,
      keyMode: metadata.keyMode ?? this.options.keyMode ?? 'required',
      fingerprintFields: metadata.fingerprintFields,
      scope: scope === 'shared' ? undefined : scope,
      policy,
      pattern: pattern === undefined ? undefined : typeof pattern === 'string' ? pattern : JSON.stringify(pattern),
    };
    this.routes.set(handler, route);
    return route;
  }
}
