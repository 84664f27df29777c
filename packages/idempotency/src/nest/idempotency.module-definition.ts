import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { IdempotencyModuleOptions } from './idempotency.options';

/**
 * `forRoot` / `forRootAsync` for `IdempotencyModule`, with one extra: `isGlobal`
 * (default `false`, as the module should be imported where it is used).
 */
export const {
  ConfigurableModuleClass: IdempotencyConfigurableModule,
  MODULE_OPTIONS_TOKEN: IDEMPOTENCY_MODULE_OPTIONS,
  OPTIONS_TYPE: IDEMPOTENCY_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: IDEMPOTENCY_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<IdempotencyModuleOptions>({ moduleName: 'Idempotency' })
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: false }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();
