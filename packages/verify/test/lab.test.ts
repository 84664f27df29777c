import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../src/cli';
import type { RunReport } from '../src/run/report';
import { freePorts } from './support/free-port';
import { captureOutput } from './support/output';

/** The repository's lab entry: the three NestJS services, built by turbo before this test (turbo.json). */
const LAB = join(__dirname, '..', '..', '..', 'lab', 'dist', 'main.js');

/**
 * The write-up's shape (2 attempts per hop, the first answer of payments late, the
 * first reply of orders lost) with budgets wide enough that only the faults time out.
 * With the lab's own 300 ms and 600 ms, a loaded machine could time out an attempt
 * no fault touched: orders retried a charge that was merely slow, or the gateway
 * gave up and answered a 5xx that the caller retried, and each such retry can charge.
 * Here an unfaulted attempt has 1.5 s, and the slow answer outlasts orders' timeout
 * by 1.5 s more: every timeout is the one the scenario means, and the count is exact.
 */
const BUDGETS = {
  gateway: { DOWNSTREAM_TIMEOUT_MS: '6000', DOWNSTREAM_ATTEMPTS: '2' },
  orders: { DOWNSTREAM_TIMEOUT_MS: '1500', DOWNSTREAM_ATTEMPTS: '2' },
};
const SLOW_FIRST_ANSWER_MS = 3000;
/** Past the gateway's whole first answer: orders' two attempts at most, each far below 6 s. */
const CALLER_TIMEOUT_MS = 15_000;

/**
 * The repository's own chain verified from outside, as any team's would be: the
 * verifier starts gateway, orders and payments plainly, with each downstream URL
 * pointed at its proxy, under each of the lab's four key policies.
 */
describe('the lab verified from outside', () => {
  let dir: string;
  beforeAll(() => {
    if (!existsSync(LAB)) throw new Error(`${LAB} is missing: npx turbo run build --filter=@idempotency-chain/lab...`);
    dir = mkdtempSync(join(tmpdir(), 'verify-lab-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function writeUp(policy: string) {
    const ports = await freePorts(6);
    // The chain's credentials: the customer's key at the gateway, the service token of each inner hop.
    const token = () => randomBytes(16).toString('hex');
    const credentials = { apiKey: token(), orders: token(), payments: token() };
    const chainEnv = {
      GATEWAY_API_KEYS: JSON.stringify({ [credentials.apiKey]: 'acct-1' }),
      ORDERS_TOKEN: credentials.orders,
      PAYMENTS_TOKEN: credentials.payments,
    };
    const [gateway, orders, payments, gatewayProxy, ordersProxy, paymentsProxy] = ports as [number, number, number, number, number, number];
    const service = (name: string, port: number, env: Record<string, string>) => ({
      start: [process.execPath, LAB, name],
      // The in-process store keeps the test off the shared Redis; the ledger follows it.
      env: { PORT: String(port), KEY_POLICY: policy, IDEMPOTENCY_STORE: 'memory', LOG_LEVEL: 'silent', ...chainEnv, ...env },
      health: `http://127.0.0.1:${port}/health`,
      startTimeoutMs: 60_000,
    });
    const config = join(dir, `lab-${policy}.json`);
    writeFileSync(
      config,
      JSON.stringify({
        entry: {
          url: `http://127.0.0.1:${gatewayProxy}/checkout`,
          headers: { authorization: `Bearer ${credentials.apiKey}` },
          body: { orderId: '{{intentId}}', account: 'acct-1', amountCents: 1200 },
          timeoutMs: CALLER_TIMEOUT_MS,
          retries: 2,
        },
        hops: [
          {
            name: 'gateway',
            listen: `127.0.0.1:${gatewayProxy}`,
            upstream: `http://127.0.0.1:${gateway}`,
            service: service('gateway', gateway, { ORDERS_URL: `http://127.0.0.1:${ordersProxy}`, ...BUDGETS.gateway }),
          },
          {
            name: 'orders',
            listen: `127.0.0.1:${ordersProxy}`,
            upstream: `http://127.0.0.1:${orders}`,
            service: service('orders', orders, { PAYMENTS_URL: `http://127.0.0.1:${paymentsProxy}`, ...BUDGETS.orders }),
          },
          {
            name: 'payments',
            listen: `127.0.0.1:${paymentsProxy}`,
            upstream: `http://127.0.0.1:${payments}`,
            holdMs: SLOW_FIRST_ANSWER_MS,
            service: service('payments', payments, {}),
          },
        ],
        effect: {
          http: {
            url: `http://127.0.0.1:${payments}/charges?orderId={{intentId}}`,
            path: '$.count',
            headers: { authorization: `Bearer ${credentials.payments}` },
          },
        },
        settle: { quietMs: 1500 },
        scenarios: ['write-up'],
      }),
    );
    // As a team's CI runs it: the command, then its JSON report read back.
    const out = captureOutput();
    const reportDir = join(dir, `lab-${policy}-report`);
    const code = await main(['run', config, '--report-dir', reportDir], out, out);
    if (code === 2) throw new Error(`the verifier could not run the lab: ${out.text()}`);
    const report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as RunReport;
    const scenario = report.scenarios[0];
    expect(scenario?.error).toBeUndefined();
    return {
      code,
      effects: scenario?.intents[0]?.effects,
      passed: scenario?.passed,
      broken: [...new Set(scenario?.violations.map((v) => v.invariant))],
      // Which attempts reached payments, in order: the count's make-up.
      atPayments: scenario?.attempts.filter((a) => a.hop === 'payments').map((a) => `a${a.attempt} ${a.status ?? '-'} ${a.outcome}`),
    };
  }

  it('counts the write-up charges of each key policy: none 4 and per-attempt 2 fail, propagated 1 and fingerprint 1 pass', async () => {
    const none = await writeUp('none');
    const perAttempt = await writeUp('per-attempt');
    const propagated = await writeUp('propagated');
    const fingerprint = await writeUp('fingerprint');
    // Without a key every attempt reaching payments charges: the gateway's 2 attempts at
    // orders x orders' 2 attempts at payments (the first of each call answered late).
    expect(none).toMatchObject({ code: 1, effects: 4, passed: false });
    expect(none.atPayments).toEqual(['a1 201 caller-gone', 'a2 201 answered', 'a3 201 caller-gone', 'a4 201 answered']);
    // A key per gateway attempt: one charge per attempt of the gateway at orders.
    expect(perAttempt).toMatchObject({ code: 1, effects: 2, passed: false });
    expect([none.broken, perAttempt.broken]).toEqual([expect.arrayContaining(['effects']), expect.arrayContaining(['effects'])]);
    expect(propagated).toMatchObject({ code: 0, effects: 1, passed: true, broken: [] });
    expect(fingerprint).toMatchObject({ code: 0, effects: 1, passed: true, broken: [] });
    process.stdout.write(
      `lab write-up: none ${none.effects} (fails: ${none.broken.join(', ')}), per-attempt ${perAttempt.effects} (fails: ${perAttempt.broken.join(', ')}), propagated ${propagated.effects} (passes), fingerprint ${fingerprint.effects} (passes)\n`,
    );
  }, 600_000);
});
