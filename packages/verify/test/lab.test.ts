import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../src/cli';
import type { RunReport } from '../src/run/report';
import { freePorts } from './support/free-port';
import { builtLab, labChain } from './support/lab-chain';
import { captureOutput } from './support/output';

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
    builtLab();
    dir = mkdtempSync(join(tmpdir(), 'verify-lab-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function writeUp(policy: string) {
    const [gateway = 0, orders = 0, payments = 0, gatewayProxy = 0, ordersProxy = 0, paymentsProxy = 0] = await freePorts(6);
    const lab = labChain({ KEY_POLICY: policy });
    const service = lab.service;
    const config = join(dir, `lab-${policy}.json`);
    writeFileSync(
      config,
      JSON.stringify({
        entry: lab.entry(gatewayProxy, CALLER_TIMEOUT_MS),
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
        effect: lab.effect(payments),
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
