import { z } from 'zod';

/**
 * The gateway's configuration: its environment, validated once at boot by
 * `ConfigModule.forRoot({ validate: validateConfig })`. An unset or empty
 * variable takes its default; a bad one stops the boot with one line naming
 * it, what is wrong and what is allowed (never a secret's value).
 */

/** Thrown for a bad environment: its message is for the operator, on one line. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const int = (min: number, max: number, fallback: number) => {
  const expected = `an integer from ${min} to ${max}`;
  return z.coerce
    .number({ error: expected })
    .refine((n) => Number.isInteger(n) && n >= min && n <= max, { error: expected })
    .default(fallback);
};

const url = (fallback: string, ...protocols: string[]) =>
  z
    .string()
    .refine((value) => URL.canParse(value) && protocols.includes(new URL(value).protocol), { error: `a URL (${protocols.join(' or ')})` })
    .default(fallback);

const oneOf = <const T extends readonly [string, ...string[]]>(values: T, fallback: T[number]) =>
  z.enum(values, { error: `one of ${values.join(', ')}` }).default(fallback);

/** A token: long enough not to be guessed, printable, no spaces. */
const TOKEN = 'tokens of 16 to 256 printable characters, no spaces';
const token = z.string({ error: TOKEN }).regex(/^[\x21-\x7e]{16,256}$/, { error: TOKEN });

/** An account a key names: it becomes the idempotency scope (`user:<account>`) and the account charged. */
const account = z.string().regex(/^[\w.:@-]{1,100}$/, { error: 'accounts of 1 to 100 letters, digits or . : @ - _' });

/** `GATEWAY_API_KEYS`: a JSON object of each customer's key to the account it names, `{"<key>":"acct-7"}`. */
const API_KEYS = 'a JSON object of key to account, {"<key>":"acct-7"}';
const apiKeys = z
  .string({ error: API_KEYS })
  .transform((raw, context) => {
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      context.addIssue({ code: 'custom', message: API_KEYS });
      return z.NEVER;
    }
  })
  .pipe(
    z
      .record(token, account, { error: API_KEYS })
      .refine((keys) => Object.keys(keys).length > 0, { error: 'a JSON object of key to account, with one key at least' })
      .transform((keys): ReadonlyMap<string, string> => new Map(Object.entries(keys))),
  );

const schema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: int(0, 65535, 3000),
  /** Where the idempotency records live; `redis` by default when `REDIS_URL` is set. */
  IDEMPOTENCY_STORE: oneOf(['memory', 'redis', 'postgres'], 'memory'),
  REDIS_URL: url('redis://127.0.0.1:6379', 'redis:', 'rediss:'),
  DATABASE_URL: url('postgres://postgres@127.0.0.1:5432/postgres', 'postgres:', 'postgresql:'),
  /** A retry arriving while its first attempt still runs: waits for its answer, or is refused with 409. */
  IN_FLIGHT: oneOf(['wait', 'reject'], 'wait'),
  /** A request while the store is down: 503 (`fail-closed`), or run unprotected (`fail-open`). */
  IDEMPOTENCY_ON_STORE_FAILURE: oneOf(['fail-closed', 'fail-open'], 'fail-closed'),
  IDEMPOTENCY_LEASE_MS: int(100, 3_600_000, 10_000),
  IDEMPOTENCY_RETENTION_MS: int(100, 30 * 24 * 3_600_000, 24 * 3_600_000),
  /** The customers: each key, presented as `Authorization: Bearer <key>` or `X-Api-Key: <key>`, names an account. */
  GATEWAY_API_KEYS: apiKeys,
  ORDERS_URL: url('http://127.0.0.1:3001', 'http:', 'https:'),
  /** The service token the gateway presents to orders. */
  ORDERS_TOKEN: token,
  /** Per-attempt timeout and attempt cap of each call to orders. */
  DOWNSTREAM_TIMEOUT_MS: int(1, 600_000, 600),
  DOWNSTREAM_ATTEMPTS: int(1, 10, 2),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
});

/** The validated configuration, as `ConfigService<GatewayConfig, true>` serves it. */
export type GatewayConfig = z.output<typeof schema>;

/** Variables whose values are (or may hold) secrets: a message names them, never what they hold. */
const SECRETS: ReadonlySet<string> = new Set(['GATEWAY_API_KEYS', 'ORDERS_TOKEN', 'REDIS_URL', 'DATABASE_URL']);

/**
 * The gateway's configuration from `env`.
 *
 * @throws ConfigError naming the first bad variable.
 */
export function validateConfig(env: Record<string, unknown>): GatewayConfig {
  const set = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = schema.safeParse({ IDEMPOTENCY_STORE: set.REDIS_URL === undefined ? 'memory' : 'redis', ...set });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0]);
    const value = set[name];
    const problem = value === undefined ? ' is not set' : SECRETS.has(name) ? ' is not valid' : `=${JSON.stringify(value)} is not valid`;
    throw new ConfigError(`${name}${problem}: expected ${issue.message}`);
  }
  const config = parsed.data;
  if (config.GATEWAY_API_KEYS.has(config.ORDERS_TOKEN)) {
    // A customer holding it could skip the gateway and call orders directly, naming any account.
    throw new ConfigError(`ORDERS_TOKEN is also a customer's key in GATEWAY_API_KEYS: give each hop a token of its own`);
  }
  return config;
}
