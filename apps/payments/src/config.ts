import { isIP } from 'node:net';
import { z } from 'zod';

/**
 * payments' configuration: its environment, validated once at boot by
 * `ConfigModule.forRoot({ validate: validateConfig })`. An unset or empty
 * variable takes its default; a bad one stops the boot with one line naming
 * it, what is wrong and what is allowed (never a secret's value).
 */

/** Thrown for a bad environment: its message is for the operator, on one line. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Digits only: `z.coerce.number` would take " " (0), "0x4e20" and "3e4" too. */
const int = (min: number, max: number, fallback: number) => {
  const expected = `an integer from ${min} to ${max}`;
  return z
    .string({ error: expected })
    .regex(/^\d{1,16}$/, { error: expected })
    .transform(Number)
    .refine((n) => n >= min && n <= max, { error: expected })
    .default(fallback);
};

/** A URL of one of `protocols`. */
export const url = (...protocols: string[]) =>
  z
    .string()
    .refine((value) => URL.canParse(value) && protocols.includes(new URL(value).protocol), { error: `a URL (${protocols.join(' or ')})` });

/** One of `values`, `fallback` when unset. */
export const oneOf = <const T extends readonly [string, ...string[]]>(values: T, fallback: T[number]) =>
  z.enum(values, { error: `one of ${values.join(', ')}` }).default(fallback);

/** Where to listen: an IP address, or a host name (RFC 1123 labels), checked before `listen` fails on it. */
const HOST = 'an IP address or a host name of letters, digits, dots and dashes (127.0.0.1, ::, localhost)';
const HOST_NAME = /^(?=.{1,253}$)[a-z\d](?:[a-z\d-]{0,61}[a-z\d])?(?:\.[a-z\d](?:[a-z\d-]{0,61}[a-z\d])?)*$/i;
const host = z.string({ error: HOST }).refine((value) => isIP(value) !== 0 || HOST_NAME.test(value), { error: HOST });

/**
 * `IDEMPOTENCY_KEY_HASH_SECRET`, the HMAC key of the key hashes in logs,
 * metrics and spans (`hashKey`). At least 32 characters: whoever reads the
 * logs and knows one key (their own request's) can test candidate secrets
 * offline against its hash, and with the secret recover every guessable
 * key (an order number) from its hash. 32 characters of
 * `openssl rand -base64 32` are 192 bits, the strength of the 32 random
 * bytes a process draws for itself when the variable is unset.
 */
const KEY_HASH_SECRET = 'at least 32 characters, e.g. from openssl rand -base64 32';
const keyHashSecret = z.string({ error: KEY_HASH_SECRET }).min(32, { error: KEY_HASH_SECRET });

/** A token: long enough not to be guessed, printable, no spaces. */
const TOKEN = 'tokens of 16 to 256 printable characters, no spaces';
const token = z.string({ error: TOKEN }).regex(/^[\x21-\x7e]{16,256}$/, { error: TOKEN });

const schema = z.object({
  HOST: host.default('127.0.0.1'),
  PORT: int(0, 65535, 3002),
  /**
   * Where the idempotency records live: PostgreSQL, and nowhere else. The
   * ledger is beside them and each charge commits with its record, so a
   * crash leaves both or neither. A ledger in this process loses the money
   * taken with it; one in Redis beside records in Redis is a second write
   * no transaction ties to the record. Kept as a variable so that an
   * environment written for gateway or orders (`memory`, `redis`) is
   * refused at boot rather than silently ignored.
   */
  IDEMPOTENCY_STORE: z
    .literal('postgres', {
      error: 'postgres, with DATABASE_URL naming the database that keeps the records and the ledger (each charge commits with its record)',
    })
    .default('postgres'),
  DATABASE_URL: url('postgres:', 'postgresql:').default('postgres://postgres@127.0.0.1:5432/postgres'),
  /** A retry arriving while its first attempt still runs: waits for its answer, or is refused with 409. */
  IN_FLIGHT: oneOf(['wait', 'reject'], 'wait'),
  /** A request while the store is down: 503 (`fail-closed`), or run unprotected (`fail-open`). */
  IDEMPOTENCY_ON_STORE_FAILURE: oneOf(['fail-closed', 'fail-open'], 'fail-closed'),
  IDEMPOTENCY_LEASE_MS: int(100, 3_600_000, 10_000),
  IDEMPOTENCY_RETENTION_MS: int(100, 30 * 24 * 3_600_000, 24 * 3_600_000),
  /** The service token orders presents to payments: the one caller payments accepts. */
  PAYMENTS_TOKEN: token,
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
  /** Read by the library itself (`hashKey`) and by `tracing.ts`: validated here, so a bad value stops the boot too. */
  IDEMPOTENCY_KEY_HASH_SECRET: keyHashSecret.optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: url('http:', 'https:').optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url('http:', 'https:').optional(),
});

/** The validated configuration, as `ConfigService<PaymentsConfig, true>` serves it. */
export type PaymentsConfig = z.output<typeof schema>;

/** Variables whose values are (or may hold) secrets: a message names them, never what they hold (an OTLP endpoint may carry credentials). */
const SECRETS: ReadonlySet<string> = new Set([
  'PAYMENTS_TOKEN',
  'DATABASE_URL',
  'IDEMPOTENCY_KEY_HASH_SECRET',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
]);

/**
 * payments' configuration from `env`.
 *
 * @throws ConfigError naming the first bad variable.
 */
export function validateConfig(env: Record<string, unknown>): PaymentsConfig {
  return parseEnvironment(schema, SECRETS, env);
}

/**
 * The variables of `env` that `schema` reads, validated: an unset or empty
 * variable takes its default. A module with variables of its own (the
 * queue's) validates them with it, so that they go with its folder.
 *
 * @throws ConfigError naming the first bad variable, never the value of one in `secrets`.
 */
export function parseEnvironment<S extends z.ZodType>(schema: S, secrets: ReadonlySet<string>, env: Record<string, unknown>): z.output<S> {
  const set = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = schema.safeParse(set);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0]);
    const value = set[name];
    const problem = value === undefined ? ' is not set' : secrets.has(name) ? ' is not valid' : `=${JSON.stringify(value)} is not valid`;
    throw new ConfigError(`${name}${problem}: expected ${expectation(issue.message)}`);
  }
  return parsed.data;
}

/**
 * What a variable should hold, from an issue's message: this file's own
 * texts as they are; zod's ("Invalid input: expected string, received
 * number") reduced to what it expected, so the line still reads
 * "<NAME> is not valid: expected …".
 */
function expectation(message: string): string {
  return /^[A-Z][\w ]*: expected (.+?)(?:, received .+)?$/.exec(message)?.[1] ?? message;
}
