import './tracing.js'; // first, before any module it instruments
import 'reflect-metadata';
import { drainOnShutdown, NestingDepthPipe } from '@idempotency-chain/idempotency/nest';
import { flushSpans } from '@idempotency-chain/idempotency/opentelemetry';
import { ValidationPipe } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from 'nestjs-pino';
import { ConfigError, type PaymentsConfig } from './config.js';
import { attachMessageTransports } from './message-transports.js';
import { PaymentsModule } from './payments.module.js';
import { UnreachableError } from './unreachable.js';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create<NestFastifyApplication>(
    await PaymentsModule.forRoot(), // validates the environment first: see config.ts
    new FastifyAdapter({ bodyLimit: 64 * 1024 }),
    { bufferLogs: true },
  );
  app.useLogger(app.get(Logger));
  // A body (or a message) that is not a valid DTO is refused with 400 (dead-lettered), before any idempotency record is claimed;
  // so is one nested too deep for ValidationPipe to walk (it would overflow the stack: a 500).
  app.useGlobalPipes(new NestingDepthPipe(), new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }));
  // SIGTERM: the requests in flight finish, the unfinished executions end and the spans are sent; then the store closes.
  app.enableShutdownHooks();
  drainOnShutdown(app, { afterDrain: flushSpans });
  // Charges from a queue (CHARGE_TRANSPORT, the queue/ folder): the consumer runs before /health answers.
  await attachMessageTransports(app);
  const config = app.get<ConfigService<PaymentsConfig, true>>(ConfigService);
  // The store connects (and migrates) in init: a database that does not answer is its own line, not the listen's.
  await app.init();
  const [port, host] = [config.get('PORT', { infer: true }), config.get('HOST', { infer: true })];
  await app.listen(port, host).catch((error: Error) => {
    // A host that does not resolve or is not this machine's, a port taken: the environment's to fix.
    throw new ConfigError(`cannot listen on HOST=${JSON.stringify(host)} PORT=${port}: ${error.message}`);
  });
}

// A bad environment, or a database or broker that does not answer, is one line; any other failed boot, its stack. All exit 1.
try {
  await bootstrap();
} catch (error) {
  const oneLine = error instanceof ConfigError || error instanceof UnreachableError;
  process.stderr.write(`payments: ${oneLine ? error.message : `cannot start: ${(error as Error).stack ?? String(error)}`}\n`);
  process.exit(1);
}
