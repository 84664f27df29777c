import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The built entry: `npm run build` first. */
const MAIN = join(__dirname, '..', 'dist', 'main.js');

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
  it.each([
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
  ])('with %s, exits 1 with one line naming it, never a secret', async (_case, spoiled, message) => {
    const ended = await boot({ ...VALID, ...spoiled });
    expect(ended.code).toBe(1);
    expect(ended.stderr).toBe(`orders: ${message}\n`);
    expect(ended.stdout).toBe('');
    expect(ended.stderr).not.toMatch(/secret|service-token/);
  });
});
