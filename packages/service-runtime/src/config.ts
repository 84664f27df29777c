import { serviceToken, type Credentials } from './auth';
import { ConfigError } from './config-error';

/**
 * payments' configuration, read from the environment once at start-up and
 * validated: a bad value stops the process with a message naming the
 * variable, the value and what is allowed. (gateway and orders validate
 * their own, in their `src/config.ts`.)
 */

/** The services that run on this package: payments alone. */
export type ServiceName = 'payments';

export { ConfigError };

/** What a service reads from its environment (see `loadConfig`). */
export interface ServiceConfig {
  service: ServiceName;
  host: string;
  port: number;
  store: 'memory' | 'redis' | 'postgres';
  redisUrl: string;
  /** PostgreSQL, for `IDEMPOTENCY_STORE=postgres` (records and the payments ledger). */
  databaseUrl: string;
  inFlight: 'wait' | 'reject';
  /** What a request gets when the store is down: 503 (default), or run unprotected. */
  onStoreFailure: 'fail-closed' | 'fail-open';
  /** Where payments keeps its ledger (default: the store's Redis). */
  ledgerRedisUrl: string;
  /** How orders sends charges to payments: HTTP (default) or a RabbitMQ queue. */
  chargeTransport: 'http' | 'amqp';
  amqpUrl: string;
  /** The charge queue (`CHARGE_QUEUE`); a test or a lab run names its own. */
  chargeQueue: string;
  /** Who may call it: orders, with the hop's service token (`PAYMENTS_TOKEN`). */
  callers: Credentials;
  leaseMs: number;
  retentionMs: number;
  logLevel: string;
}

/** Read and validate the configuration of `service` from `env`. */
export function loadConfig(service: ServiceName, env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  const read = environmentReader(env);
  const redisUrl = read.string('REDIS_URL', 'redis://127.0.0.1:6379');
  const callers = new Map([[serviceToken('PAYMENTS_TOKEN', env.PAYMENTS_TOKEN), 'orders']]);
  return {
    service,
    host: read.string('HOST', '127.0.0.1'),
    port: read.int('PORT', 3002, 0, 65535),
    store: read.oneOf('IDEMPOTENCY_STORE', ['memory', 'redis', 'postgres'], env.REDIS_URL ? 'redis' : 'memory'),
    databaseUrl: read.url('DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/postgres', ['postgres:', 'postgresql:']),
    redisUrl: read.url('REDIS_URL', redisUrl, ['redis:', 'rediss:']),
    inFlight: read.oneOf('IN_FLIGHT', ['wait', 'reject'], 'wait'),
    onStoreFailure: read.oneOf('IDEMPOTENCY_ON_STORE_FAILURE', ['fail-closed', 'fail-open'], 'fail-closed'),
    ledgerRedisUrl: read.url('LEDGER_REDIS_URL', redisUrl, ['redis:', 'rediss:']),
    chargeTransport: read.oneOf('CHARGE_TRANSPORT', ['http', 'amqp'], 'http'),
    amqpUrl: read.url('AMQP_URL', 'amqp://guest:guest@127.0.0.1:5672', ['amqp:', 'amqps:']),
    chargeQueue: read.name('CHARGE_QUEUE', 'payments.charges'),
    callers,
    leaseMs: read.int('IDEMPOTENCY_LEASE_MS', 10_000, 100, 3_600_000),
    retentionMs: read.int('IDEMPOTENCY_RETENTION_MS', 24 * 3_600_000, 100, 30 * 24 * 3_600_000),
    logLevel: read.oneOf('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
  };
}

/**
 * Typed, validated reads of `env`; each throws `ConfigError` naming the
 * variable, the value and what is allowed. An empty variable counts as unset.
 */
export function environmentReader(env: NodeJS.ProcessEnv) {
  const fail = (name: string, value: string, expected: string): never => {
    throw new ConfigError(`${name}=${JSON.stringify(value)} is not valid: expected ${expected}`);
  };
  const raw = (name: string) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  return {
    string: (name: string, fallback: string) => raw(name) ?? fallback,
    int(name: string, fallback: number, min: number, max: number): number {
      const value = raw(name);
      if (value === undefined) return fallback;
      const parsed = Number(value);
      if (!Number.isInteger(parsed) || parsed < min || parsed > max) fail(name, value, `an integer from ${min} to ${max}`);
      return parsed;
    },
    oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
      const value = raw(name) ?? fallback;
      if (!allowed.includes(value as T)) fail(name, value, `one of ${allowed.join(', ')}`);
      return value as T;
    },
    name(name: string, fallback: string): string {
      const value = raw(name) ?? fallback;
      if (!/^[\w.:-]{1,200}$/.test(value)) fail(name, value, 'a name of 1 to 200 letters, digits, dots, colons, dashes or underscores');
      return value;
    },
    list<T extends string>(name: string, allowed: readonly T[]): T[] {
      const values = (raw(name) ?? '')
        .split(',')
        .map((v) => v.trim())
        .filter(Boolean);
      for (const value of values) {
        if (!allowed.includes(value as T)) fail(name, value, `a comma-separated list of ${allowed.join(', ')}`);
      }
      return values as T[];
    },
    url(name: string, fallback: string, protocols: string[]): string {
      const value = raw(name) ?? fallback;
      let url: URL | undefined;
      try {
        url = new URL(value);
      } catch {
        url = undefined;
      }
      if (!url || !protocols.includes(url.protocol)) fail(name, value, `a URL (${protocols.join(' or ')})`);
      return value;
    },
  };
}
