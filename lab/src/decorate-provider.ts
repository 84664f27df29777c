import type { DynamicModule, FactoryProvider, InjectionToken, OptionalFactoryDependency, Provider, Type } from '@nestjs/common';
import { MODULE_METADATA } from '@nestjs/common/constants';
import type { TestingModuleBuilder } from '@nestjs/testing';

type ModuleNode = Type | DynamicModule;
type Dependency = InjectionToken | OptionalFactoryDependency;

/**
 * The provider of `token` that `root` declares, itself or through the
 * modules it imports, read the way Nest's scanner reads them (a dynamic
 * module's own fields, a class's `@Module` metadata); `undefined` when none.
 */
export function declaredProvider(root: ModuleNode, token: InjectionToken, seen = new Set<unknown>()): Provider | undefined {
  if (seen.has(root)) return undefined;
  seen.add(root);
  const dynamic = 'module' in root ? root : undefined;
  const moduleClass = dynamic ? dynamic.module : (root as Type);
  const providers: Provider[] = [...(dynamic?.providers ?? []), ...(Reflect.getMetadata(MODULE_METADATA.PROVIDERS, moduleClass) ?? [])];
  const found = providers.find((provider) => (typeof provider === 'function' ? provider : provider.provide) === token);
  if (found) return found;
  const imports: unknown[] = [...(dynamic?.imports ?? []), ...(Reflect.getMetadata(MODULE_METADATA.IMPORTS, moduleClass) ?? [])];
  for (const imported of imports) {
    // Forward references and promised modules are not followed: the apps declare neither.
    if (typeof imported !== 'function' && !(imported && typeof imported === 'object' && 'module' in imported)) continue;
    const provider = declaredProvider(imported as ModuleNode, token, seen);
    if (provider) return provider;
  }
  return undefined;
}

/**
 * Put `decorate` in front of the provider of `token` that the app's module
 * declares: the app builds its value as it always does, and `decorate`
 * receives it (with `inject`'s values after it) and returns what the app
 * gets instead. Nest replaces a provider, it cannot wrap one; this wraps the
 * app's own factory or value, so the app's module stays as it is.
 *
 * @throws when the app declares no factory or value provider for `token`.
 */
export function decorateProvider<T>(
  builder: TestingModuleBuilder,
  root: ModuleNode,
  token: InjectionToken,
  decorate: (value: T, ...dependencies: never[]) => T | Promise<T>,
  inject: Dependency[] = [],
): void {
  const provider = declaredProvider(root, token);
  if (!provider || typeof provider === 'function' || !('useFactory' in provider || 'useValue' in provider)) {
    throw new Error(`The lab can only decorate a factory or value provider; ${String(token)} is declared otherwise, or not at all`);
  }
  const original: FactoryProvider<T> =
    'useFactory' in provider
      ? (provider as FactoryProvider<T>)
      : { provide: token, useFactory: () => (provider as { useValue: T }).useValue };
  const own = original.inject?.length ?? 0;
  builder.overrideProvider(token).useFactory({
    inject: [...(original.inject ?? []), ...inject],
    factory: async (...values: unknown[]) =>
      decorate(await original.useFactory(...values.slice(0, own)), ...(values.slice(own) as never[])),
  });
}
