/** The `type` member of an RFC 9457 problem document, when `body` is one. */
export function problemType(body: unknown): string | undefined {
  const type = typeof body === 'object' && body !== null ? (body as { type?: unknown }).type : undefined;
  return typeof type === 'string' ? type : undefined;
}
