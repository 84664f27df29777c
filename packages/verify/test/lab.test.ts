import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig } from '../src/config/load';
import { runChain } from '../src/run/runner';
import { freePorts } from './support/free-port';

/** The repository's lab entry: the three NestJS services, built by turbo before this test (turbo.json). */
const LAB = join(__dirname, '..', '..', '..', 'lab', 'dist', 'main.js');

/**
 * The repository's own chain verified from outside, as any team's would be: the
 * verifier starts gateway, orders and payments plainly, with each downstream URL
 * pointed at its proxy, under each of the lab's four key policies.
 */
describe('the lab verified from outside', () => {
  beforeAll(() => {
    if (!existsSync(LAB)) throw new Error(`${LAB} is missing: npx turbo run build --filter=@idempotency-chain/lab...`);
  });

  async function writeUp(policy: string): Promise<{ effects: number | undefined; passed: boolean | undefined; broken: string[] }> {
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
    const config = parseConfig(
      JSON.stringify({
        entry: {
          url: `http://127.0.0.1:${gatewayProxy}/checkout`,
          headers: { authorization: `Bearer ${credentials.apiKey}` },
          body: { orderId: '{{intentId}}', account: 'acct-1', amountCents: 1200 },
          timeoutMs: 3000,
          retries: 2,
        },
        hops: [
          {
            name: 'gateway',
            listen: `127.0.0.1:${gatewayProxy}`,
            upstream: `http://127.0.0.1:${gateway}`,
            service: service('gateway', gateway, { ORDERS_URL: `http://127.0.0.1:${ordersProxy}` }),
          },
          {
            name: 'orders',
            listen: `127.0.0.1:${ordersProxy}`,
            upstream: `http://127.0.0.1:${orders}`,
            service: service('orders', orders, { PAYMENTS_URL: `http://127.0.0.1:${paymentsProxy}` }),
          },
          // 1.5 s: past orders' 300 ms and the gateway's 600 ms timeouts, as in the lab's write-up.
          {
            name: 'payments',
            listen: `127.0.0.1:${paymentsProxy}`,
            upstream: `http://127.0.0.1:${payments}`,
            holdMs: 1500,
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
      `lab-${policy}.json`,
    );
    const run = await runChain(config, { configFile: `lab-${policy}.json` });
    const scenario = run.scenarios[0];
    expect(scenario?.error).toBeUndefined();
    return {
      effects: scenario?.intents[0]?.effects,
      passed: scenario?.passed,
      broken: [...new Set(scenario?.violations.map((v) => v.invariant))],
    };
  }

  it('counts the write-up charges of each key policy: none 4 and per-attempt 2 fail, propagated 1 and fingerprint 1 pass', async () => {
    const none = await writeUp('none');
    const perAttempt = await writeUp('per-attempt');
    // Without a key that spans the whole chain every attempt reaching payments can
    // charge: the write-up makes 4 (2 for per-attempt's inner key), and a loaded
    // machine can only add timeouts, hence retries, hence charges, never remove one.
    expect(none.effects).toBeGreaterThanOrEqual(4);
    expect(perAttempt.effects).toBeGreaterThanOrEqual(2);
    expect([none.passed, perAttempt.passed]).toEqual([false, false]);
    expect(none.broken).toContain('effects');
    expect(perAttempt.broken).toContain('effects');
    const propagated = await writeUp('propagated');
    const fingerprint = await writeUp('fingerprint');
    expect(propagated).toEqual({ effects: 1, passed: true, broken: [] });
    expect(fingerprint).toEqual({ effects: 1, passed: true, broken: [] });
    process.stdout.write(
      `lab write-up: none ${none.effects} (fails: ${none.broken.join(', ')}), per-attempt ${perAttempt.effects} (fails: ${perAttempt.broken.join(', ')}), propagated 1 (passes), fingerprint 1 (passes)\n`,
    );
  }, 600_000);
});
