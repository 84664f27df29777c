import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buffer } from 'node:stream/consumers';
import { parseConfig } from '../src/config/load';
import { runChain } from '../src/run/runner';
import { freePorts } from './support/free-port';

/**
 * A two-hop chain of real HTTP services: `api` takes the caller's tenant and key and
 * forwards the charge to `ledger` (through the ledger's proxy); `ledger` keeps one
 * answer per key it was sent and replays it, as a store shared by every tenant does.
 * `verbatim` forwards the caller's key as it came; `scoped` puts the tenant in front.
 */
async function startChain(forwarding: 'verbatim' | 'scoped', ledgerProxy: number) {
  const answers = new Map<string, string>();
  const charges = new Map<string, number>();
  const ledger = await serve(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://ledger');
    if (req.method === 'GET') {
      res.end(JSON.stringify({ count: charges.get(url.searchParams.get('order') ?? '') ?? 0 }));
      return;
    }
    const { orderId } = JSON.parse((await buffer(req)).toString()) as { orderId: string };
    const key = req.headers['idempotency-key'] as string;
    if (!answers.has(key)) {
      charges.set(orderId, (charges.get(orderId) ?? 0) + 1);
      answers.set(key, JSON.stringify({ chargeId: answers.size + 1, orderId }));
    }
    res.writeHead(201, { 'content-type': 'application/json' }).end(answers.get(key));
  });
  const api = await serve(async (req, res) => {
    const key = req.headers['idempotency-key'] as string;
    const forwarded = forwarding === 'verbatim' ? key : `${String(req.headers['x-tenant'])}:${key}`;
    const answer = await fetch(`http://127.0.0.1:${ledgerProxy}/charges`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': forwarded },
      body: await buffer(req),
    });
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
  });
  return { api: port(api), ledger: port(ledger), close: () => Promise.all([close(api), close(ledger)]) };
}

async function serve(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>): Promise<Server> {
  const server = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

const port = (server: Server) => (server.address() as AddressInfo).port;
const close = (server: Server) => {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(resolve));
};

async function verify(forwarding: 'verbatim' | 'scoped') {
  const [apiProxy, ledgerProxy] = (await freePorts(2)) as [number, number];
  const chain = await startChain(forwarding, ledgerProxy);
  try {
    const config = parseConfig(
      JSON.stringify({
        entry: {
          url: `http://127.0.0.1:${apiProxy}/checkout`,
          body: { orderId: '{{intentId}}', amount: 1200 },
          callers: [{ headers: { 'X-Tenant': 'acme' } }, { headers: { 'X-Tenant': 'globex' } }],
        },
        hops: [
          { name: 'api', listen: String(apiProxy), upstream: `http://127.0.0.1:${chain.api}` },
          { name: 'ledger', listen: String(ledgerProxy), upstream: `http://127.0.0.1:${chain.ledger}` },
        ],
        effect: { http: { url: `http://127.0.0.1:${chain.ledger}/charges?order={{intentId}}`, path: '$.count' } },
        settle: { quietMs: 300 },
      }),
      'chain.json',
    );
    return await runChain(config, { configFile: 'chain.json', scenarios: ['two-callers'] });
  } finally {
    await chain.close();
  }
}

describe('the two-callers scenario', () => {
  it("fails a chain that forwards the caller's key verbatim into a store shared by tenants", async () => {
    const run = await verify('verbatim');
    const scenario = run.scenarios[0];
    expect(scenario?.name).toBe('two-callers');
    expect(scenario?.error).toBeUndefined();
    expect(run.passed).toBe(false);
    expect(scenario?.intents.map((i) => i.effects)).toEqual([1, 0]);
    const second = scenario?.intents[1]?.intentId;
    expect(scenario?.violations.map((v) => [v.intentId, v.invariant])).toEqual([
      [second, 'effects'],
      [second, 'own-answer'],
    ]);
    expect(scenario?.violations.find((v) => v.invariant === 'own-answer')?.message).toMatch(/^2 of the 2 answers were another caller's/);
  });

  it('passes a chain that scopes the key by its caller', async () => {
    const run = await verify('scoped');
    expect(run.scenarios[0]?.violations).toEqual([]);
    expect(run.scenarios[0]?.intents.map((i) => i.effects)).toEqual([1, 1]);
    expect(run.passed).toBe(true);
  });
});
