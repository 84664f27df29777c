import { ValidationPipe, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from 'nestjs-pino';
import { ConfigError, loadConfig, type ServiceConfig, type ServiceName } from './config';

/** Largest request body a lab service reads. */
const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * Create a service's Nest application on Fastify, with validated DTOs
 * (refused before any idempotency record is claimed: see `isFinalOutcome`),
 * problem+json errors, JSON logs and graceful shutdown, which lets
 * in-flight requests finish.
 */
export async function createServiceApp(
  rootModule: (config: ServiceConfig) => DynamicModule,
  config: ServiceConfig,
): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(
    rootModule(config),
    new FastifyAdapter({ bodyLimit: BODY_LIMIT_BYTES }),
    { bufferLogs: true },
  );
  app.useLogger(app.get(Logger));
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }));
  app.enableShutdownHooks();
  return app;
}

/** What a service may add between creating its app and listening. */
export interface RunOptions {
  /** E.g. attach and start a message consumer, so `/health` answers only once it runs. */
  beforeListen?: (app: NestFastifyApplication, config: ServiceConfig) => Promise<void>;
}

/** Start `service` from the environment; exit with a clear message on bad configuration. */
export async function runService(
  service: ServiceName,
  rootModule: (config: ServiceConfig) => DynamicModule,
  options: RunOptions = {},
): Promise<void> {
  let config: ServiceConfig;
  try {
    config = loadConfig(service);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${service}: ${error.message}\n`);
      process.exit(64);
    }
    throw error;
  }
  const app = await createServiceApp(rootModule, config);
  await options.beforeListen?.(app, config);
  await app.listen(config.port, config.host);
}
