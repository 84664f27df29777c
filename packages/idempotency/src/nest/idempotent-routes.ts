import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModulesContainer, Reflector } from '@nestjs/core';
import { IdempotencyCoordinator } from '../coordinator';
import type { OperationPolicy } from '../policy';
import { GRAPHQL_METADATA, IDEMPOTENT_METADATA, NEST_METADATA, RPC_PATTERN_METADATA } from './idempotency.constants';
import { IDEMPOTENCY_MODULE_OPTIONS } from './idempotency.module-definition';
import { moduleSettings, type IdempotencyModuleOptions, type KeyMode } from './idempotency.options';
import { declarationOf, type IdempotentDeclaration } from './idempotent-declaration';
import { GRPC_REQUEST_STREAM, isGrpcRequestStream } from './rpc/grpc';
import { principalScope, type ScopeResolver } from './scope';

/**
 * One `@Idempotent` handler of one controller, everything about it decided
 * once at boot from its `IdempotentDeclaration` (as written on the handler),
 * the module's defaults and the operation's policy. Every call of the
 * handler uses it; nothing about it is decided per call.
 *
 * @beta
 */
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

/** The parts of Nest's module graph the boot check reads (structural: no deep import of `@nestjs/core`). */
interface Module {
  readonly isGlobal: boolean;
  readonly imports: Set<Module>;
  readonly providers: Map<unknown, { instance: unknown }>;
}
interface InstanceWrapper {
  readonly instance: unknown;
  readonly metatype: unknown;
  readonly host?: Module;
}

/** `RouteParamtypes.RESPONSE` and `.NEXT` in Nest's route argument metadata keys (`"1:0"`). */
const RESPONSE = '1';
const NEXT = '2';

/**
 * Every `@Idempotent` route the module serves, resolved at boot: its
 * declaration read, its policy merged over the operation's and the
 * service's and checked, its scope decided. A policy that could run one key
 * twice (a heartbeat as long as the lease, say), or a route `@Idempotent`
 * cannot protect (server-sent events, a gRPC method whose requests are a
 * stream, a WebSocket gateway, a subclass route that only inherits a
 * class-level `@Idempotent`) stops the app here, naming it, and a request
 * pays for a map lookup instead of all of that. Keyed by the
 * controller and the handler: one handler inherited by two controllers is
 * two routes.
 */
@Injectable()
export class IdempotentRoutes implements OnModuleInit {
  private readonly routes = new Map<Function, Map<IdempotentDeclaration, IdempotentRoute>>();
  private readonly logger = new Logger('IdempotencyModule');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly modules: ModulesContainer,
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
    const mine = this.ownModule();
    for (const wrapper of this.discovery.getControllers() as InstanceWrapper[]) if (this.serves(wrapper, mine)) this.check(wrapper);
    for (const wrapper of this.discovery.getProviders()) {
      const { instance, metatype } = wrapper;
      if (!instance || !metatype || typeof instance !== 'object') continue;
      const prototype = Object.getPrototypeOf(instance) as object;
      const name = this.scanner.getAllMethodNames(prototype).find((method) => declarationOf(prototype, method));
      if (!name) continue;
      if (!isGraphqlResolver(metatype))
        throw new TypeError(
          `@Idempotent on ${metatype.name}.${name}: only HTTP routes and message handlers of a controller, and GraphQL mutations, can be protected`,
        );
      if (this.serves(wrapper as InstanceWrapper, mine)) this.checkResolver(metatype as Function, prototype as Record<string, unknown>);
    }
  }

  /** Resolve every protected field of a GraphQL resolver, and refuse any that is not a mutation. */
  private checkResolver(resolver: Function, prototype: Record<string, unknown>): void {
    for (const name of this.scanner.getAllMethodNames(prototype)) {
      const route = declarationOf(prototype, name);
      if (!route) continue;
      if (Reflect.getMetadata(GRAPHQL_METADATA.resolverType, prototype[name] as object) !== 'Mutation')
        throw new TypeError(`@Idempotent on ${resolver.name}.${name}: of a GraphQL resolver, only a mutation can be protected`);
      this.route(resolver, route);
    }
  }

  /** The route a declared handler is, in `controller` (resolved once). */
  route(controller: Function, declaration: IdempotentDeclaration): IdempotentRoute {
    let byDeclaration = this.routes.get(controller);
    if (!byDeclaration) this.routes.set(controller, (byDeclaration = new Map()));
    let route = byDeclaration.get(declaration);
    if (!route) byDeclaration.set(declaration, (route = this.resolve(controller, declaration)));
    return route;
  }

  /** Resolve every protected route of a controller, and refuse what cannot be protected. */
  private check({ instance, metatype }: InstanceWrapper): void {
    if (!metatype) return;
    const controller = metatype as Function;
    const prototype = (instance ? Object.getPrototypeOf(instance) : controller.prototype) as Record<string, unknown>;
    for (const name of this.scanner.getAllMethodNames(prototype)) {
      const handler = prototype[name];
      if (typeof handler !== 'function') continue;
      const declaration = declarationOf(prototype, name);
      const where = `${controller.name}.${name}`;
      if (!declaration) {
        const isRoute = Reflect.hasMetadata(NEST_METADATA.path, handler) || Reflect.hasMetadata(RPC_PATTERN_METADATA, handler);
        if (isRoute && this.reflector.getAllAndOverride(IDEMPOTENT_METADATA, [handler, controller])) {
          throw new TypeError(
            `${where} inherits @Idempotent from a parent class but is not protected: put @Idempotent on ${controller.name} or on the method`,
          );
        }
        continue;
      }
      if (Reflect.hasMetadata(NEST_METADATA.sse, handler))
        throw new TypeError(`@Idempotent on ${where}: server-sent events cannot be replayed`);
      if (isGrpcRequestStream(Reflect.getMetadata(RPC_PATTERN_METADATA, handler)))
        throw new TypeError(`@Idempotent on ${where}: ${GRPC_REQUEST_STREAM}`);
      this.route(controller, declaration);
    }
  }

  private resolve(controller: Function, declaration: IdempotentDeclaration): IdempotentRoute {
    const { name } = declaration;
    let policy: OperationPolicy;
    try {
      policy = this.coordinator.policyFor(declaration.operation, declaration.policy);
    } catch (error) {
      throw Object.assign(error as Error, { message: `@Idempotent on ${controller.name}.${name}: ${(error as Error).message}` });
    }
    const scope = declaration.scope ?? this.options.scope ?? principalScope;
    const method = (controller.prototype as Record<string, unknown>)[name];
    const pattern = (
      typeof method === 'function' ? this.reflector.get<unknown[] | undefined>(RPC_PATTERN_METADATA, method) : undefined
    )?.[0];
    return {
      operation: declaration.operation,
      keyMode: declaration.keyMode ?? moduleSettings(this.options).keyMode,
      fingerprintFields: declaration.fingerprintFields,
      scope: scope === 'shared' ? undefined : scope,
      policy,
      pattern: pattern === undefined ? undefined : typeof pattern === 'string' ? pattern : JSON.stringify(pattern),
      writesItself: writesItself(controller, name),
    };
  }

  /** The Nest module this provider belongs to. */
  private ownModule(): Module | undefined {
    for (const module of this.modules.values() as Iterable<Module>)
      if (module.providers.get(IdempotentRoutes)?.instance === this) return module;
    return undefined;
  }

  /**
   * Whether a controller's module gets its `IdempotencyRunner` from this
   * module: it is this module, imports it (directly, or through a module
   * that re-exports it), or this module is global. Another
   * `IdempotencyModule` of the same app checks its own controllers.
   */
  private serves({ host }: InstanceWrapper, mine: Module | undefined): boolean {
    if (!mine || !host || mine.isGlobal || host === mine) return true;
    for (const imported of host.imports) if (imported === mine || imported.imports.has(mine)) return true;
    return false;
  }
}

/** Nest renders nothing for a handler that takes the response (or `next`) without passthrough. */
function writesItself(controller: Function, method: string): boolean {
  const args = Object.keys(Reflect.getMetadata(NEST_METADATA.routeArguments, controller, method) ?? {});
  const takesResponse = args.some((key) => [RESPONSE, NEXT].includes(key.split(':')[0] as string));
  return takesResponse && Reflect.getMetadata(NEST_METADATA.responsePassthrough, controller, method) !== true;
}

/** Whether a provider is a `@Resolver()` of `@nestjs/graphql` (read by its metadata: that package stays optional). */
function isGraphqlResolver(provider: Function): boolean {
  return Reflect.hasOwnMetadata(GRAPHQL_METADATA.resolverName, provider) || Reflect.hasOwnMetadata(GRAPHQL_METADATA.resolverType, provider);
}
