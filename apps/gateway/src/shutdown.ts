import { ProxyTracerProvider, trace } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';

/** How long a shutdown waits for buffered spans to reach the collector: a collector that is down must not hold it up. */
const SPAN_FLUSH_BOUND_MS = 3_000;

/**
 * Make a Fastify server's `close()` (NestJS's `app.close()`, run on SIGTERM
 * by `enableShutdownHooks`) a graceful shutdown that ends:
 *
 * - The requests in flight finish; each answer Fastify sends from then on
 *   says `Connection: close`, and its connection closes once it is sent. Fastify
 *   closes the keep-alive connections that are idle when the shutdown
 *   starts, but one that was busy stays open after its answer until its
 *   keep-alive timeout (72 s by default), and `close()` waits for it
 *   (fastify/fastify#7044): a deploy would wait, then kill.
 * - Then `drain` waits for the work that goes on without a client (the
 *   idempotent executions whose clients went away, `IdempotencyModule.drain`):
 *   here, before NestJS runs any `onApplicationShutdown` hook, so nothing
 *   those handlers use (the store, a ledger, a message client) is closed
 *   under them.
 * - Then the spans the tracer provider (see `tracing.ts`) still buffers
 *   are sent, at most {@link SPAN_FLUSH_BOUND_MS} later: SIGTERM would
 *   otherwise lose the traces of the very requests it waited for.
 */
export function shutDownGracefully(server: FastifyInstance, drain: () => Promise<void>): void {
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
    await drain();
    await flushSpans();
  });
}

/** Send the spans the global tracer provider still buffers; nothing when tracing is off. */
async function flushSpans(): Promise<void> {
  const global = trace.getTracerProvider();
  const provider = (global instanceof ProxyTracerProvider ? global.getDelegate() : global) as { forceFlush?: () => Promise<void> };
  if (!provider.forceFlush) return;
  let bound: NodeJS.Timeout | undefined;
  await Promise.race([
    provider.forceFlush().catch(() => undefined),
    new Promise((resolve) => (bound = setTimeout(resolve, SPAN_FLUSH_BOUND_MS))),
  ]);
  clearTimeout(bound);
}
