import { bootMain, freePort, unreachableAt } from '../payments.test-support.js';

/** A configuration payments boots with; each case spoils one queue variable of it. */
const VALID = { PAYMENTS_TOKEN: 'service-token-to-payments', PORT: '0' };

describe('payments started with a bad queue environment', () => {
  it('exits 1 with one line naming CHARGE_TRANSPORT when it is unknown', async () => {
    const ended = await bootMain({ ...VALID, CHARGE_TRANSPORT: 'smtp' });
    expect(ended.code).toBe(1);
    expect(ended.stderr).toBe('payments: CHARGE_TRANSPORT="smtp" is not valid: expected one of http, amqp, nats\n');
    expect(ended.stdout).toBe('');
  });

  it('exits 1 with one line naming AMQP_URL, never its value, when it is not an AMQP URL', async () => {
    const ended = await bootMain({ ...VALID, CHARGE_TRANSPORT: 'amqp', AMQP_URL: 'http://guest:secret@broker' });
    expect(ended.code).toBe(1);
    expect(ended.stderr).toBe('payments: AMQP_URL is not valid: expected a URL (amqp: or amqps:)\n');
  });
});

describe('payments started while its broker does not answer', () => {
  it('exits 1 with one line naming RabbitMQ and where it was looked for, never its password', async () => {
    const port = await freePort();
    const ended = await bootMain({ ...VALID, CHARGE_TRANSPORT: 'amqp', AMQP_URL: `amqp://guest:secret@127.0.0.1:${port}` });
    expect(ended.code).toBe(1);
    expect(ended.stderr).toMatch(unreachableAt('RabbitMQ', 'amqp://guest:***@', port));
    expect(ended.stdout + ended.stderr).not.toContain('secret');
    expect(ended.stderr).not.toMatch(/^\s+at /m);
  });
});
