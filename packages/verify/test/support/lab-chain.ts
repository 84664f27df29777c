import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The repository's lab entry: the three NestJS services, built by turbo before the tests that start it (turbo.json). */
const LAB = join(__dirname, '..', '..', '..', '..', 'lab', 'dist', 'main.js');

/** The lab's entry, or how to build it when it is missing. */
export function builtLab(): string {
  if (!existsSync(LAB)) throw new Error(`${LAB} is missing: npx turbo run build --filter=@idempotency-chain/lab...`);
  return LAB;
}

/**
 * The parts of a config for the lab that every verification of it shares: fresh
 * credentials (the customer's key at the gateway, the service token of each inner
 * hop), each service started plainly with `env` over them, the entry pressing the
 * gateway's proxy, and the charges counted at payments.
 */
export function labChain(env: Record<string, string>) {
  const [apiKey, ordersToken, paymentsToken] = Array.from({ length: 3 }, () => randomBytes(16).toString('hex')) as [string, string, string];
  const chainEnv = {
    GATEWAY_API_KEYS: JSON.stringify({ [apiKey]: 'acct-1' }),
    ORDERS_TOKEN: ordersToken,
    PAYMENTS_TOKEN: paymentsToken,
    // The in-process store keeps the tests off the shared Redis; the ledger follows it.
    IDEMPOTENCY_STORE: 'memory',
    LOG_LEVEL: 'silent',
    ...env,
  };
  return {
    service: (name: string, port: number, own: Record<string, string>) => ({
      start: [process.execPath, builtLab(), name],
      env: { PORT: String(port), ...chainEnv, ...own },
      health: `http://127.0.0.1:${port}/health`,
      startTimeoutMs: 60_000,
    }),
    entry: (gatewayProxy: number, timeoutMs: number) => ({
      url: `http://127.0.0.1:${gatewayProxy}/checkout`,
      headers: { authorization: `Bearer ${apiKey}` },
      body: { orderId: '{{intentId}}', account: 'acct-1', amountCents: 1200 },
      timeoutMs,
      retries: 2,
    }),
    effect: (payments: number) => ({
      http: {
        url: `http://127.0.0.1:${payments}/charges?orderId={{intentId}}`,
        path: '$.count',
        headers: { authorization: `Bearer ${paymentsToken}` },
      },
    }),
  };
}
