import type { DynamicModule } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createServiceApp } from './bootstrap';
import { loadConfig, type ServiceConfig, type ServiceName } from './config';

/** A service booted on an ephemeral loopback port, for tests over real HTTP. */
export interface BootedService {
  app: NestFastifyApplication;
  url: string;
  config: ServiceConfig;
}

/** Boot `service` with `env` (quiet logs, port 0) and listen on loopback. */
export async function bootService(
  service: ServiceName,
  rootModule: (config: ServiceConfig) => DynamicModule,
  env: Record<string, string>,
): Promise<BootedService> {
  const config = loadConfig(service, { LOG_LEVEL: 'silent', PORT: '0', ...env });
  const app = await createServiceApp(rootModule, config);
  await app.listen(0, '127.0.0.1');
  return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1'), config };
}
