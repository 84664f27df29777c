import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The built entry: `npm run build` first. */
const MAIN = join(import.meta.dirname, '..', 'dist', 'main.js');

const KEY = 'customer-key-of-acct-7';
const TOKEN = 'service-token-to-orders';
/** A configuration the gateway boots with; each case spoils one variable of it. */
const VALID = { GATEWAY_API_KEYS: JSON.stringify({ [KEY]: 'acct-7' }), ORDERS_TOKEN: TOKEN, IDEMPOTENCY_STORE: 'memory', PORT: '0' };

/** Run the built gateway with `env` alone (and PATH) to its exit. */
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

describe('the gateway started with a bad environment', () => {
  // Each case is a process of its own that exits at boot: they run side by side.
  it.concurrent.for<[string, Record<string, string>, string]>([
    [
      'GATEWAY_API_KEYS unset',
      { GATEWAY_API_KEYS: '' },
      'GATEWAY_API_KEYS is not set: expected a JSON object of key to account, {"<key>":"acct-7"}',
    ],
    [
      'GATEWAY_API_KEYS not JSON',
      { GATEWAY_API_KEYS: `${KEY}` },
      'GATEWAY_API_KEYS is not valid: expected a JSON object of key to account, {"<key>":"acct-7"}',
    ],
    [
      'ORDERS_TOKEN too short',
      { ORDERS_TOKEN: 'short' },
      'ORDERS_TOKEN is not valid: expected tokens of 16 to 256 printable characters, no spaces',
    ],
    [
      'ORDERS_TOKEN a customer key',
      { ORDERS_TOKEN: KEY },
      "ORDERS_TOKEN is also a customer's key in GATEWAY_API_KEYS: give each hop a token of its own",
    ],
    ['PORT not a number', { PORT: 'http' }, 'PORT="http" is not valid: expected an integer from 0 to 65535'],
    [
      'IDEMPOTENCY_STORE unknown',
      { IDEMPOTENCY_STORE: 'disk' },
      'IDEMPOTENCY_STORE="disk" is not valid: expected one of memory, redis, postgres',
    ],
    ['ORDERS_URL not http', { ORDERS_URL: 'ftp://orders' }, 'ORDERS_URL="ftp://orders" is not valid: expected a URL (http: or https:)'],
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
    [
      'GATEWAY_API_KEYS with a number as an account',
      { GATEWAY_API_KEYS: JSON.stringify({ [KEY]: 7 }) },
      'GATEWAY_API_KEYS is not valid: expected accounts of 1 to 100 letters, digits or . : @ - _, as JSON strings',
    ],
  ])('with %s, exits 1 with one line naming it, never a secret', async ([, spoiled, message], { expect }) => {
    const ended = await boot({ ...VALID, ...spoiled });
    expect(ended.code).toBe(1);
    expect(ended.stderr).toBe(`gateway: ${message}\n`);
    expect(ended.stdout).toBe('');
    expect(ended.stderr).not.toContain(TOKEN);
    expect(ended.stderr).not.toContain('hash-secret');
  });
});
