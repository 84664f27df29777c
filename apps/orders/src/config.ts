import { isIP } from 'node:net';
import { z } from 'zod';

/**
 * orders' configuration: its environment, validated once at boot by
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

const url = (...protocols: string[]) =>
  z
    .string()
    .refine((value) => URL.canParse(value) && protocols.includes(new URL(value).protocol), { error: `a URL (${protocols.join(' or ')})` });

const oneOf = <const T extends readonly [string, ...string[]]>(values: T, fallback: T[number]) =>
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
  PORT: int(0, 65535, 3001),
  /** Where the idempotency records live; `redis` by default when `REDIS_URL` is set. */
  IDEMPOTENCY_STORE: oneOf(['memory', 'redis', 'postgres'], 'memory'),
  REDIS_URL: url('redis:', 'rediss:').default('redis://127.0.0.1:6379'),
  DATABASE_URL: url('postgres:', 'postgresql:').default('postgres://postgres@127.0.0.1:5432/postgres'),
  /** A retry arriving while its first attempt still runs: waits for its answer, or is refused with 409. */
  IN_FLIGHT: oneOf(['wait', 'reject'], 'wait'),
  /** A request while the store is down: 503 (`fail-closed`), or run unprotected (`fail-open`). */
  IDEMPOTENCY_ON_STORE_FAILURE: oneOf(['fail-closed', 'fail-open'], 'fail-closed'),
  IDEMPOTENCY_LEASE_MS: int(100, 3_600_000, 10_000),
  IDEMPOTENCY_RETENTION_MS: int(100, 30 * 24 * 3_600_000, 24 * 3_600_000),
  /** The service token the gateway presents to orders: the one caller orders accepts. */
  ORDERS_TOKEN: token,
  PAYMENTS_URL: url('http:', 'https:').default('http://127.0.0.1:3002'),
  /** The service token orders presents to payments. */
  PAYMENTS_TOKEN: token,
  /** Per-attempt timeout and attempt cap of each call to payments (`OrdersModule`). */
  DOWNSTREAM_TIMEOUT_MS: int(1, 600_000, 300),
  DOWNSTREAM_ATTEMPTS: int(1, 10, 2),
  /** The broker and the queue charges go to (`QueuedOrdersModule`). */
  AMQP_URL: url('amqp:', 'amqps:').default('amqp://guest:guest@127.0.0.1:5672'),
  CHARGE_QUEUE: z
    .string()
    .regex(/^[\w.:-]{1,200}$/, { error: 'a name of 1 to 200 letters, digits, dots, colons, dashes or underscores' })
    .default('payments.charges'),
  /** The broker charge requests go to (`NatsOrdersModule`). */
  NATS_URL: url('nats:', 'tls:').default('nats://127.0.0.1:4222'),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
  /** Read by the library itself (`hashKey`) and by `tracing.ts`: validated here, so a bad value stops the boot too. */
  IDEMPOTENCY_KEY_HASH_SECRET: keyHashSecret.optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: url('http:', 'https:').optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url('http:', 'https:').optional(),
});

/** The validated configuration, as `ConfigService<OrdersConfig, true>` serves it. */
export type OrdersConfig = z.output<typeof schema>;

/** Variables whose values are (or may hold) secrets: a message names them, never what they hold (an OTLP endpoint may carry credentials). */
const SECRETS: ReadonlySet<string> = new Set([
  'ORDERS_TOKEN',
  'PAYMENTS_TOKEN',
  'AMQP_URL',
  'NATS_URL',
  'REDIS_URL',
  'DATABASE_URL',
  'IDEMPOTENCY_KEY_HASH_SECRET',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
]);

/**
 * orders' configuration from `env`.
 *
 * @throws ConfigError naming the first bad variable.
 */
export function validateConfig(env: Record<string, unknown>): OrdersConfig {
  const set = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = schema.safeParse({ IDEMPOTENCY_STORE: set.REDIS_URL === undefined ? 'memory' : 'redis', ...set });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0]);
    const value = set[name];
    const problem = value === undefined ? ' is not set' : SECRETS.has(name) ? ' is not valid' : `=${JSON.stringify(value)} is not valid`;
    throw new ConfigError(`${name}${problem}: expected ${expectation(issue.message)}`);
  }
  const config = parsed.data;
  if (config.PAYMENTS_TOKEN === config.ORDERS_TOKEN) {
    // The gateway, holding it, could skip orders and call payments directly.
    throw new ConfigError('PAYMENTS_TOKEN is the same as ORDERS_TOKEN: give each hop a token of its own');
  }
  return config;
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
