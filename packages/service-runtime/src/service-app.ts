import { ValidationPipe, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { drainOnShutdown } from '@idempotency-chain/idempotency/nest';
import { flushSpans } from '@idempotency-chain/idempotency/opentelemetry';
import { Logger } from 'nestjs-pino';
import { ConfigError, loadConfig, type ServiceConfig, type ServiceName } from './config';
import { UnreachableError } from './unreachable';

/** Largest request body a service reads. */
const BODY_LIMIT_BYTES = 64 * 1024;

/** The HTTP adapter of every service: Fastify, with a bounded body. */
export function serviceAdapter(): FastifyAdapter {
  return new FastifyAdapter({ bodyLimit: BODY_LIMIT_BYTES });
}

/**
 * What every service app gets once created, however it was built: JSON
 * logs, validated DTOs (refused with 400 before any idempotency record is
 * claimed, see `statusOutcome`) and graceful shutdown on SIGTERM
 * (`drainOnShutdown`), which drains the app's `IdempotencyModule` (every
 * service imports one), then sends the buffered spans. Create the app with `{ bufferLogs: true }`.
 */
export function prepareServiceApp(app: NestFastifyApplication): NestFastifyApplication {
  app.useLogger(app.get(Logger));
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }));
  app.enableShutdownHooks();
  drainOnShutdown(app, { afterDrain: flushSpans });
  return app;
}

/** Create a service's Nest application on Fastify from its root module. */
export async function createServiceApp(root: DynamicModule): Promise<NestFastifyApplication> {
  return prepareServiceApp(await NestFactory.create<NestFastifyApplication>(root, serviceAdapter(), { bufferLogs: true }));
}

/** Builds a service's app from its configuration. */
export type BuildApp = (config: ServiceConfig) => Promise<NestFastifyApplication>;

/** What a service may do between creating its app and listening. */
export interface RunOptions {
  /** E.g. attach and start a message consumer, so `/health` answers only once it runs. */
  beforeListen?: (app: NestFastifyApplication, config: ServiceConfig) => Promise<void>;
}

/**
 * Start `service` from the environment. It never ends in an unhandled
 * rejection: a bad configuration exits 64 naming the variable, whether the
 * environment is refused as it is read or by the app as it boots (a
 * `ConfigError` of its own, e.g. a store it cannot keep its data in); a boot
 * that fails otherwise exits 1 with one line on stderr (see {@link bootFailure}).
 */
export async function runService(service: ServiceName, build: BuildApp, options: RunOptions = {}): Promise<void> {
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
  try {
    const app = await build(config);
    await options.beforeListen?.(app, config);
    await app.listen(config.port, config.host);
  } catch (error) {
    process.stderr.write(`${service}: ${bootFailure(error)}\n`);
    process.exit(error instanceof ConfigError ? 64 : 1);
  }
}

/**
 * What a failed boot prints after the service's name: a store that did not
 * answer (`UnreachableError`) or a configuration the app refused
 * (`ConfigError`) as its one-line message, which is all an operator needs;
 * anything else, a bug, with its stack.
 */
export function bootFailure(error: unknown): string {
  if (error instanceof UnreachableError || error instanceof ConfigError) return error.message;
  return `cannot start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
}
