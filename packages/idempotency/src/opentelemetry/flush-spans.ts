import { ProxyTracerProvider, trace } from '@opentelemetry/api';

/** How long `flushSpans` waits by default: a collector that is down must not hold a shutdown up. */
const DEFAULT_BOUND_MS = 3_000;

/**
 * Send the spans the global tracer provider still buffers (its
 * `forceFlush()`), waiting at most `boundMs`; nothing when no SDK is
 * registered. Never rejects: an export that fails is the exporter's to report.
 * For a shutdown: SIGTERM would otherwise lose the spans of the very
 * requests it waited for (see `drainOnShutdown`'s `afterDrain`).
 *
 * @example
 * drainOnShutdown(app, { afterDrain: flushSpans });
 *
 * @public
 */
export async function flushSpans(boundMs = DEFAULT_BOUND_MS): Promise<void> {
  const global = trace.getTracerProvider();
  const provider = (global instanceof ProxyTracerProvider ? global.getDelegate() : global) as { forceFlush?: () => Promise<void> };
  if (typeof provider.forceFlush !== 'function') return;
  let bound: NodeJS.Timeout | undefined;
  await Promise.race([provider.forceFlush().catch(() => undefined), new Promise((resolve) => (bound = setTimeout(resolve, boundMs)))]);
  clearTimeout(bound);
}
