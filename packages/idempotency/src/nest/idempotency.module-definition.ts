import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { IdempotencyModuleOptions } from './idempotency.options';

/**
 * `forRoot` / `forRootAsync` for `IdempotencyModule`, with one extra: `isGlobal`
 * (default `false`, as the module should be imported where it is used).
 */
const definition = new ConfigurableModuleBuilder<IdempotencyModuleOptions>({ moduleName: 'Idempotency' })
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: false }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();

export const { ConfigurableModuleClass: IdempotencyConfigurableModule } = definition;

/**
 * The injection token of the options `IdempotencyModule.forRoot` (or
 * `forRootAsync`) was given, as the module resolved them.
 *
 * @example
 * constructor(@Inject(IDEMPOTENCY_MODULE_OPTIONS) private readonly options: IdempotencyModuleOptions) {}
 *
 * @public
 */
export const IDEMPOTENCY_MODULE_OPTIONS = definition.MODULE_OPTIONS_TOKEN;
