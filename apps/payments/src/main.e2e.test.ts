import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './payments.test-support';

/** The built entry: `npm run build` first (`npm test` does, `pretest`). */
const MAIN = join(__dirname, '..', 'dist', 'main.js');

const TOKEN = 'service-token-to-payments';
/** A configuration payments boots with; each case spoils one variable of it. */
const VALID = { PAYMENTS_TOKEN: TOKEN, PORT: '0' };

/** Run the built payments with `env` alone (and PATH) to its exit. */
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

describe('payments started with a bad environment', () => {
  it.each([
    [
      'PAYMENTS_TOKEN unset',
      { PAYMENTS_TOKEN: '' },
      'PAYMENTS_TOKEN is not set: expected tokens of 16 to 256 printable characters, no spaces',
    ],
    [
      'PAYMENTS_TOKEN too short',
      { PAYMENTS_TOKEN: 'short' },
      'PAYMENTS_TOKEN is not valid: expected tokens of 16 to 256 printable characters, no spaces',
    ],
    [
      'IDEMPOTENCY_STORE not postgres',
      { IDEMPOTENCY_STORE: 'redis' },
      'IDEMPOTENCY_STORE="redis" is not valid: expected postgres, with DATABASE_URL naming the database that keeps the records ' +
        'and the ledger (each charge commits with its record)',
    ],
    [
      'DATABASE_URL not postgres',
      { DATABASE_URL: 'mysql://payments:secret@db/payments' },
      'DATABASE_URL is not valid: expected a URL (postgres: or postgresql:)',
    ],
    ['CHARGE_TRANSPORT unknown', { CHARGE_TRANSPORT: 'smtp' }, 'CHARGE_TRANSPORT="smtp" is not valid: expected one of http, amqp'],
    [
      'IDEMPOTENCY_LEASE_MS too short',
      { IDEMPOTENCY_LEASE_MS: '5' },
      'IDEMPOTENCY_LEASE_MS="5" is not valid: expected an integer from 100 to 3600000',
    ],
  ])('with %s, exits 1 with one line naming it, never a secret', async (_case, spoiled, message) => {
    const ended = await boot({ ...VALID, ...spoiled });
    expect(ended.code).toBe(1);
    expect(ended.stderr).toBe(`payments: ${message}\n`);
    expect(ended.stdout).toBe('');
    expect(ended.stderr).not.toMatch(/secret|service-token/);
  });
});

describe('payments started while what it needs does not answer', () => {
  it.each([
    [
      'PostgreSQL',
      (port: number) => ({ DATABASE_URL: `postgres://postgres:secret@127.0.0.1:${port}/postgres` }),
      'postgres://postgres:***@',
    ],
    ['RabbitMQ', (port: number) => ({ CHARGE_TRANSPORT: 'amqp', AMQP_URL: `amqp://guest:secret@127.0.0.1:${port}` }), 'amqp://guest:***@'],
  ])('%s: exits 1 with one line naming it and where it was looked for, never its password', async (what, env, redacted) => {
    const port = await freePort();
    const ended = await boot({ ...VALID, ...env(port) });
    expect(ended.code).toBe(1);
    expect(ended.stderr).toMatch(
      new RegExp(`^payments: cannot reach ${what} at ${redacted.replace(/[*]/g, '\\*')}127\\.0\\.0\\.1:${port}\\S*: .+\\n$`),
    );
    expect(ended.stdout + ended.stderr).not.toContain('secret');
    expect(ended.stderr).not.toMatch(/^\s+at /m);
  });
});
