import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePorts } from '@idempotency-chain/local-processes';
import { newestReleases, oldestReleases, type NodeRelease } from './node-matrix';
import { packedPackages } from './packed-tarballs';
import { VerifierCli, type VerifierRun } from './verifier-cli';

/** A three-hop chain in Python's standard library, naive or keyed: the verifier's own proof chain. */
const PYTHON_CHAIN = resolve(__dirname, '../../packages/verify/test/fixtures/python-chain/chain.py');

/**
 * The config a team would write for the Python chain: the verifier starts
 * every service (deepest first, so it can kill payments), each behind its
 * proxy, and counts charges from payments' ledger.
 */
async function pythonChain(variant: 'naive' | 'keyed', dir: string): Promise<unknown> {
  const [gatewayProxy, ordersProxy, paymentsProxy, gateway, orders, payments] = (await freePorts(6)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const service = (role: string, port: number, ...args: string[]) => ({
    start: ['python3', PYTHON_CHAIN, role, '--variant', variant, '--port', String(port), ...args],
    health: `http://127.0.0.1:${port}/health`,
  });
  const hop = (name: string, proxy: number, port: number) => ({
    name,
    listen: `127.0.0.1:${proxy}`,
    upstream: `http://127.0.0.1:${port}`,
  });
  return {
    entry: {
      url: `http://127.0.0.1:${gatewayProxy}/checkout`,
      body: { orderId: '{{intentId}}', amount: 1200 },
      timeoutMs: 10_000,
      retries: 4,
    },
    hops: [
      { ...hop('gateway', gatewayProxy, gateway), service: service('gateway', gateway, '--downstream', `http://127.0.0.1:${ordersProxy}`) },
      { ...hop('orders', ordersProxy, orders), service: service('orders', orders, '--downstream', `http://127.0.0.1:${paymentsProxy}`) },
      // Past orders' 1 s timeout to payments.
      {
        ...hop('payments', paymentsProxy, payments),
        holdMs: 1500,
        service: service('payments', payments, '--db', join(dir, 'charges.sqlite')),
      },
    ],
    effect: { http: { url: `http://127.0.0.1:${payments}/charges?order={{intentId}}`, path: '$.count' } },
    settle: { quietMs: 1000, timeoutMs: 60_000 },
    doubleClick: { presses: 4 },
    // Half the default's wait in late-press: keyed payments keeps its keys with its charges, for good.
    retention: { minimumMs: 5000 },
  };
}

/** The packed verifier installed for this describe block's tests, in a temp folder they share; `run` verifies in a folder of its own. */
function installVerifier(node: NodeRelease): { run: (variant: 'naive' | 'keyed', args?: string[]) => Promise<VerifierRun> } {
  let work: string;
  let verifier: VerifierCli;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), `verifier-${node.version}-`));
    verifier = await VerifierCli.install(join(work, 'verifier'), packedPackages());
  }, 600_000);
  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });
  return {
    run: async (variant, args = []) => {
      const dir = join(work, variant);
      return verifier.run(node, await pythonChain(variant, dir), dir, args);
    },
  };
}

// The verifier's proof, from its tarball, on every release a team's CI may run it on. Two releases
// at a time (maxConcurrency in vitest.config.mts): a run spends its time waiting out the chain's
// timeouts and quiet periods, each in its own folder, on its own ports.
describe.concurrent.each(newestReleases())('the packed verifier on Node.js $version, against a Python chain it starts', (node) => {
  const installed = installVerifier(node);

  it('passes the keyed chain on every scenario of its catalog with one charge per intent, and exits 0', async () => {
    const run = await installed.run('keyed');

    expect(
      run.report?.scenarios.filter((s) => !s.passed).map((s) => s.name),
      run.output,
    ).toEqual([]);
    expect(run.exitCode).toBe(0);
    // The whole catalog ran, kill included: the verifier started payments.
    expect(run.report?.scenarios.map((s) => s.name)).toContain('kill');
    for (const scenario of run.report?.scenarios ?? []) {
      for (const intent of scenario.intents) expect(intent.effects).toBe(intent.expected === 'none' ? 0 : 1);
    }
  }, 300_000);

  it("fails the naive chain's write-up, which charges more than once, and exits 1", async () => {
    const run = await installed.run('naive', ['--scenario', 'write-up']);

    expect(run.exitCode, run.output).toBe(1);
    expect(run.report?.scenarios[0]?.intents[0]?.effects).toBeGreaterThan(1);
    expect(run.report?.scenarios[0]?.violations).toContainEqual(expect.objectContaining({ invariant: 'effects' }));
  }, 300_000);
});

// The first release of each range the verifier's `engines` admits: its CLI gives both verdicts there too.
describe.each(oldestReleases())('the packed verifier on Node.js $version, the first release its engines admit', (node) => {
  const installed = installVerifier(node);

  it.each([
    ['keyed', 0, 1],
    ['naive', 1, 2],
  ] as const)(
    'runs the write-up on the %s chain: exit %i, at least %i charges',
    async (variant, exitCode, charges) => {
      const run = await installed.run(variant, ['--scenario', 'write-up']);

      expect(run.exitCode, run.output).toBe(exitCode);
      expect(run.report?.scenarios[0]?.intents[0]?.effects).toBeGreaterThanOrEqual(charges);
      if (variant === 'keyed') expect(run.report?.scenarios[0]?.intents[0]?.effects).toBe(1);
    },
    300_000,
  );
});
