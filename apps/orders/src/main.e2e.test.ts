import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The built entry: `npm run build` first. */
const MAIN = join(import.meta.dirname, '..', 'dist', 'main.js');

const TOKEN = 'service-token-to-orders';
/** A configuration orders boots with; each case spoils one variable of it. */
const VALID = { ORDERS_TOKEN: TOKEN, PAYMENTS_TOKEN: 'service-token-to-payments', IDEMPOTENCY_STORE: 'memory', PORT: '0' };

/** Run the built orders with `env` alone (and PATH) to its exit. */
async function boot(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build first`);
  const child = spawn(process.execPath, [MAIN], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let [stdout, stderr] = ['', ''];
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const bound = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(bound);
  return { code, stdout, stderr };
}

describe('orders started with a bad environment', () => {
  // Each case is a process of its own that exits at boot: they run side by side.
  it.concurrent.for<[string, Record<string, string>, string]>([
    ['ORDERS_TOKEN unset', { ORDERS_TOKEN: '' }, 'ORDERS_TOKEN is not set: expected tokens of 16 to 256 printable characters, no spaces'],
    [
      'PAYMENTS_TOKEN too short',
      { PAYMENTS_TOKEN: 'short' },
      'PAYMENTS_TOKEN is not valid: expected tokens of 16 to 256 printable characters, no spaces',
    ],
    [
      'PAYMENTS_TOKEN the one it accepts',
      { PAYMENTS_TOKEN: TOKEN },
      'PAYMENTS_TOKEN is the same as ORDERS_TOKEN: give each hop a token of its own',
    ],
    [
      'DOWNSTREAM_ATTEMPTS out of range',
      { DOWNSTREAM_ATTEMPTS: '0' },
      'DOWNSTREAM_ATTEMPTS="0" is not valid: expected an integer from 1 to 10',
    ],
    [
      'CHARGE_QUEUE not a name',
      { CHARGE_QUEUE: 'a queue' },
      'CHARGE_QUEUE="a queue" is not valid: expected a name of 1 to 200 letters, digits, dots, colons, dashes or underscores',
    ],
    ['AMQP_URL not amqp', { AMQP_URL: 'http://user:secret@broker' }, 'AMQP_URL is not valid: expected a URL (amqp: or amqps:)'],
    ['PORT blank', { PORT: ' ' }, 'PORT=" " is not valid: expected an integer from 0 to 65535'],
    ['PORT in hex', { PORT: '0x4e20' }, 'PORT="0x4e20" is not valid: expected an integer from 0 to 65535'],
    [
      'HOST not a host name',
      { HOST: 'not a host!' },
      'HOST="not a host!" is not valid: expected an IP address or a host name of letters, digits, dots and dashes (127.0.0.1, ::, localhost)',
    ],
    [
      "HOST not this machine's",
      { HOST: '192.0.2.1', LOG_LEVEL: 'silent' }, // the boot got as far as listen: its logs are not the point
      'cannot listen on HOST="192.0.2.1" PORT=0: listen EADDRNOTAVAIL: address not available 192.0.2.1',
    ],
    [
      'IDEMPOTENCY_KEY_HASH_SECRET too short',
      { IDEMPOTENCY_KEY_HASH_SECRET: 'hash-secret-of-24-chars' },
      'IDEMPOTENCY_KEY_HASH_SECRET is not valid: expected at least 32 characters, e.g. from openssl rand -base64 32',
    ],
    [
      'OTEL_EXPORTER_OTLP_ENDPOINT not a URL',
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' },
      'OTEL_EXPORTER_OTLP_ENDPOINT is not valid: expected a URL (http: or https:)',
    ],
  ])('with %s, exits 1 with one line naming it, never a secret', async ([, spoiled, message], { expect }) => {
    const ended = await boot({ ...VALID, ...spoiled });
    expect(ended.code).toBe(1);
    expect(ended.stderr).toBe(`orders: ${message}\n`);
    expect(ended.stdout).toBe('');
    expect(ended.stderr).not.toMatch(/secret|service-token/);
  });
});
