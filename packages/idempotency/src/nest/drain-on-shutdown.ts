import type { INestApplication } from '@nestjs/common';
import { IdempotencyModule } from './idempotency.module';

/** What `drainOnShutdown` uses of a Fastify server: its hooks. */
interface FastifyHooks {
  addHook(name: 'preClose' | 'onClose', hook: () => Promise<void>): unknown;
  addHook(
    name: 'onSend',
    hook: (
      request: unknown,
      reply: { header(name: string, value: string): unknown },
      payload: unknown,
      done: (error: null, payload: unknown) => void,
    ) => void,
  ): unknown;
}

/**
 * Options of {@link drainOnShutdown}.
 *
 * @public
 */
export interface DrainOnShutdownOptions {
  /**
   * Runs once the executions have drained, before any `onApplicationShutdown`
   * hook: e.g. `flushSpans` from `@idempotency-chain/idempotency/opentelemetry`,
   * so that SIGTERM does not lose the traces of the requests it waited for.
   */
  afterDrain?: () => Promise<void>;
}

/**
 * Make `app.close()` (run on SIGTERM by `enableShutdownHooks()`) of an app
 * on Fastify a graceful shutdown that ends, in this order:
 *
 * 1. The requests in flight finish. Each answer sent from then on says
 *    `Connection: close`, and its connection closes once it is sent: a
 *    keep-alive connection that was busy when the shutdown began would
 *    otherwise stay open until its keep-alive timeout (72 s by default) and
 *    `close()` would wait for it (fastify/fastify#7044).
 * 2. The app's `IdempotencyModule` drains (see `IdempotencyModule.drain`):
 *    the executions whose clients went away store their answers or give
 *    their keys back. Fastify runs this once the server has stopped, before
 *    NestJS runs any `onApplicationShutdown` hook, so nothing those handlers
 *    use (the store, a ledger, a message client) is closed under them.
 * 3. `afterDrain`, when given.
 *
 * Call it once, after creating the app, before `listen`.
 *
 * @example
 * const app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter());
 * app.enableShutdownHooks();
 * drainOnShutdown(app, { afterDrain: flushSpans });
 * await app.listen(3000);
 *
 * @throws TypeError when the app does not run on `@nestjs/platform-fastify`.
 * @public
 */
export function drainOnShutdown(app: INestApplication, options: DrainOnShutdownOptions = {}): void {
  const server = app.getHttpAdapter().getInstance() as Partial<FastifyHooks>;
  if (typeof server.addHook !== 'function') {
    throw new TypeError('drainOnShutdown needs an app on Fastify (@nestjs/platform-fastify)');
  }
  const idempotency = app.get(IdempotencyModule, { strict: false });
  let closing = false;
  server.addHook('preClose', async () => {
    closing = true;
  });
  // Callback style: this runs for every answer, and an async hook would cost each one a promise.
  server.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  // Fastify runs its onClose hooks once the server stopped and the requests in flight ended.
  server.addHook('onClose', async () => {
    await idempotency.drain();
    await options.afterDrain?.();
  });
}
