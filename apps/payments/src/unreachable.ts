/**
 * A database payments cannot start without did not answer at boot. Its
 * message is meant for the operator, on one line, naming it and where it was
 * looked for (never with a password), then the driver's reason:
 * `cannot reach PostgreSQL at postgres://postgres:***@127.0.0.1:5432/postgres: connect ECONNREFUSED 127.0.0.1:5432`.
 * `main.ts` prints it as it is and exits 1.
 */
export class UnreachableError extends Error {
  override name = 'UnreachableError';

  constructor(
    /** What did not answer, e.g. `PostgreSQL`. */
    readonly what: string,
    address: string,
    cause: unknown,
  ) {
    super(`cannot reach ${what} at ${redactedAddress(address)}: ${reasonOf(cause)}`, { cause });
  }
}

/** `address` with the password of a URL replaced by `***`; anything else as it is. */
function redactedAddress(address: string): string {
  if (!URL.canParse(address)) return address;
  const url = new URL(address);
  if (!url.password) return address;
  url.password = '***';
  return url.toString();
}

/**
 * The driver's reason, on one line. Node's connect to a name with several
 * addresses (`localhost`) fails with an `AggregateError` whose own message is
 * empty: its first error's is used then.
 */
function reasonOf(cause: unknown): string {
  const error = cause as { message?: unknown; code?: unknown; errors?: unknown[] } | null | undefined;
  const first = Array.isArray(error?.errors) ? (error.errors[0] as { message?: unknown } | undefined) : undefined;
  const reason = [error?.message, first?.message, error?.code].find((value) => typeof value === 'string' && value !== '');
  return String(reason ?? cause)
    .replace(/\s+/g, ' ')
    .trim();
}
