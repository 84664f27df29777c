import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { bootMain, DATABASE_URL, freePort, MAIN, unreachableAt } from './payments.test-support.js';

const TOKEN = 'service-token-to-payments';
/** A configuration payments boots with; each case spoils one variable of it. */
const VALID = { PAYMENTS_TOKEN: TOKEN, PORT: '0' };
const boot = (env: Record<string, string>) => bootMain({ ...VALID, ...env });

describe('payments started with a bad environment', () => {
  // Each case is a process of its own that exits at boot: they run side by side.
  it.concurrent.for<[string, Record<string, string>, string]>([
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
    [
      'IDEMPOTENCY_LEASE_MS too short',
      { IDEMPOTENCY_LEASE_MS: '5' },
      'IDEMPOTENCY_LEASE_MS="5" is not valid: expected an integer from 100 to 3600000',
    ],
    ['PORT blank', { PORT: ' ' }, 'PORT=" " is not valid: expected an integer from 0 to 65535'],
    ['PORT in hex', { PORT: '0x4e20' }, 'PORT="0x4e20" is not valid: expected an integer from 0 to 65535'],
    ['PORT in exponent form', { PORT: '3e4' }, 'PORT="3e4" is not valid: expected an integer from 0 to 65535'],
    [
      'HOST not a host name',
      { HOST: 'not a host!' },
      'HOST="not a host!" is not valid: expected an IP address or a host name of letters, digits, dots and dashes (127.0.0.1, ::, localhost)',
    ],
    [
      "HOST not this machine's",
      { HOST: '192.0.2.1', DATABASE_URL, LOG_LEVEL: 'silent' }, // the boot got as far as listen: its logs are not the point
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
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT with credentials, not http',
      { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'ftp://user:secret@collector/v1/traces' },
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is not valid: expected a URL (http: or https:)',
    ],
  ])('with %s, exits 1 with one line naming it, never a secret', async ([, spoiled, message], { expect }) => {
    const ended = await boot(spoiled);
    expect(ended.code).toBe(1);
    expect(ended.stderr).toBe(`payments: ${message}\n`);
    expect(ended.stdout).toBe('');
    expect(ended.stderr).not.toMatch(/secret|service-token/);
  });
});

describe('payments started while its database does not answer', () => {
  it('exits 1 with one line naming PostgreSQL and where it was looked for, never its password', async () => {
    const port = await freePort();
    const ended = await boot({ DATABASE_URL: `postgres://postgres:secret@127.0.0.1:${port}/postgres` });
    expect(ended.code).toBe(1);
    expect(ended.stderr).toMatch(unreachableAt('PostgreSQL', 'postgres://postgres:***@', port));
    expect(ended.stdout + ended.stderr).not.toContain('secret');
    expect(ended.stderr).not.toMatch(/^\s+at /m);
  });
});

describe('payments started as main.ts starts it', () => {
  const child: { process?: ChildProcess; url?: string } = {};

  beforeAll(async () => {
    const port = await freePort();
    const env = { PATH: process.env.PATH ?? '', ...VALID, PORT: String(port), DATABASE_URL, LOG_LEVEL: 'silent' };
    child.process = spawn(process.execPath, [MAIN], { env, stdio: 'ignore' });
    child.url = `http://127.0.0.1:${port}`;
    // Up once /health answers; a boot that fails ends the process, and the wait with it.
    const exited = once(child.process, 'exit').then(() => Promise.reject(new Error('payments exited at boot')));
    const answering = (async () => {
      for (;;) {
        const ok = await fetch(`${child.url}/health`).then(
          (response) => response.ok,
          () => false,
        );
        if (ok) return;
        await sleep(50);
      }
    })();
    await Promise.race([answering, exited]);
  });
  afterAll(async () => {
    if (child.process?.exitCode === null) {
      const exited = once(child.process, 'exit');
      child.process.kill('SIGTERM');
      await exited;
    }
  });

  it('refuses a body nested thousands deep (under the 64 KiB limit) with 400 problem+json, not a stack overflow', async () => {
    const body = `{"orderId":"o-deep","account":"acct-7","amountCents":500,"x":${'['.repeat(30_000)}${']'.repeat(30_000)}}`;
    expect(body.length).toBeLessThan(64 * 1024);
    const response = await fetch(`${child.url}/charges`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, 'idempotency-key': `"deep-${randomUUID()}"` },
      body,
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await response.json()).toMatchObject({ status: 400, detail: 'The request body is nested deeper than 32 levels' });
    expect(child.process?.exitCode).toBeNull();
  });
});
