import type { IncomingHttpHeaders } from 'node:http';

/**
 * Headers that describe one connection, not the message (RFC 9110 §7.6.1), plus the
 * framing ones: the proxy buffers bodies whole and lets each side frame them anew.
 */
const CONNECTION_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'host',
  'content-length',
]);

/** The headers of a message that may cross the proxy. */
export function forwardableHeaders(headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>): IncomingHttpHeaders {
  const kept: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !CONNECTION_HEADERS.has(name.toLowerCase())) kept[name] = value;
  }
  return kept;
}
