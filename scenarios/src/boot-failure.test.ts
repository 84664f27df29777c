import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { freePort, track } from '@idempotency-chain/local-processes';

/** Bound on a process booting and giving up, on a loaded 2-core machine. */
const EXIT_BOUND_MS = 60_000;
vi.setConfig({ testTimeout: 2 * EXIT_BOUND_MS, hookTimeout: 2 * EXIT_BOUND_MS });

interface Ended {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run `node <entry> ...args` with `env` over this process's, to its exit (killed past the bound). */
async function runToExit(entry: string, args: string[], env: Record<string, string>): Promise<Ended> {
  const child = track(spawn(process.execPath, [entry, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
  let [stdout, stderr] = ['', ''];
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const bound = setTimeout(() => child.kill('SIGKILL'), EXIT_BOUND_MS);
  // 'close': the process has exited and its output is read to the end.
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(bound);
  return { code, stdout, stderr };
}

/** Whatever a boot prints, nothing of it is a stack trace or an unhandled error. */
function expectNoStack(ended: Ended): void {
  for (const output of [ended.stdout, ended.stderr]) {
    expect(output).not.toMatch(/^\s+at /m);
    expect(output).not.toMatch(/unhandled/i);
  }
}

const payments = require.resolve('@idempotency-chain/payments/main');
const lab = require.resolve('@idempotency-chain/lab/main');

/** The service token payments accepts from orders: it is required, so every boot here sets it. */
const SERVICE_TOKEN = 'boot-failure-service-token';

describe('payments started without its credentials', () => {
  it.each([
    ['unset', '', 'PAYMENTS_TOKEN is not set: expected tokens of 16 to 256 printable characters, no spaces'],
    ['too short to be a secret', 'short', 'PAYMENTS_TOKEN is not valid: expected tokens of 16 to 256 printable characters, no spaces'],
  ])('exits 1 with one line naming PAYMENTS_TOKEN when it is %s, never its value', async (_case, value, message) => {
    const ended = await runToExit(payments, [], { PORT: String(await freePort()), PAYMENTS_TOKEN: value });
    expect(ended.code).toBe(1);
    expect(ended.stderr).toBe(`payments: ${message}\n`);
    expectNoStack(ended);
  });
});

describe('payments started on a store other than PostgreSQL', () => {
  it.each(['memory', 'redis'])('IDEMPOTENCY_STORE=%s: exits 1 with one line naming IDEMPOTENCY_STORE and DATABASE_URL', async (store) => {
    const ended = await runToExit(payments, [], {
      PORT: String(await freePort()),
      IDEMPOTENCY_STORE: store,
      CHARGE_TRANSPORT: 'http',
      PAYMENTS_TOKEN: SERVICE_TOKEN,
    });
    expect(ended.code).toBe(1);
    expect(ended.stderr).toBe(
      `payments: IDEMPOTENCY_STORE="${store}" is not valid: expected postgres, with DATABASE_URL ` +
        'naming the database that keeps the records and the ledger (each charge commits with its record)\n',
    );
    expectNoStack(ended);
  });
});

describe('payments started while its store does not answer', () => {
  // payments runs on Redis only in the lab, with the lab's ledger (payments itself requires PostgreSQL).
  it("through the lab's entry, exits 1 with one line naming Redis and where it was looked for, never its password", async () => {
    const port = await freePort();
    const url = `redis://:secret@127.0.0.1:${port}`;
    const ended = await runToExit(lab, ['payments'], {
      PORT: String(await freePort()),
      IDEMPOTENCY_STORE: 'redis',
      REDIS_URL: url,
      LEDGER_REDIS_URL: url,
      CHARGE_TRANSPORT: 'http',
      PAYMENTS_TOKEN: SERVICE_TOKEN,
    });
    expect(ended.code).toBe(1);
    expect(ended.stderr).toBe(`payments: cannot reach Redis at redis://127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}\n`);
    expect(ended.stdout + ended.stderr).not.toContain('secret');
    expectNoStack(ended);
  });

  it('on PostgreSQL, exits 1 with one line naming the database', async () => {
    const port = await freePort();
    const ended = await runToExit(payments, [], {
      PORT: String(await freePort()),
      IDEMPOTENCY_STORE: 'postgres',
      DATABASE_URL: `postgres://postgres:secret@127.0.0.1:${port}/postgres`,
      PAYMENTS_TOKEN: SERVICE_TOKEN,
    });
    expect(ended.code).toBe(1);
    expect(ended.stderr).toBe(
      `payments: cannot reach PostgreSQL at postgres://postgres:***@127.0.0.1:${port}/postgres: connect ECONNREFUSED 127.0.0.1:${port}\n`,
    );
    expectNoStack(ended);
  });
});
