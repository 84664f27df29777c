import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '@idempotency-chain/local-processes';
import { satisfies } from 'semver';
import { AppCopy, readmeStartCommand } from './app-copy';
import { APP_FIXTURES, APPS } from './fixture';
import { everyRelease, HOST_NODE, newestReleases, pathFor, type NodeRelease } from './node-matrix';
import { packedPackages } from './packed-tarballs';
import { SERVICES } from './services';
import { VerifierCli } from './verifier-cli';

/** The apps a team can copy alone: the chain, outermost first. */
const CHAIN = APP_FIXTURES;
type AppName = (typeof CHAIN)[number];

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * Where an app is started: every release of the matrix its `engines` admits
 * (the newest of each major and the first of each range), and the machine's
 * own, which built it.
 */
function appReleases(app: AppName): NodeRelease[] {
  const { engines } = JSON.parse(readFileSync(join(APPS, app, 'package.json'), 'utf8')) as { engines: { node: string } };
  return everyRelease().filter((node) => node.version === HOST_NODE.version || satisfies(node.version, engines.node));
}

describe('each app copied alone out of the workspace', () => {
  let work: string;
  let verifier: Promise<VerifierCli>;
  const copies = new Map<AppName, Promise<AppCopy>>();

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'idempotency-copy-out-'));
    verifier = VerifierCli.install(join(work, 'verifier'), packedPackages());
    verifier.catch(() => undefined);
  });
  afterAll(async () => {
    const lines = await Promise.all(
      [...copies.values()].map(async (pending) => {
        const copy = await pending.catch(() => undefined);
        if (!copy) return undefined;
        return `  ${copy.app}: ${copy.times.map((t) => `${t.step} ${seconds(t.ms)}`).join(', ')}; total ${seconds(copy.totalMs())}`;
      }),
    );
    process.stdout.write(`copy-out times:\n${lines.filter(Boolean).join('\n')}\n`);
    if (work) await rm(work, { recursive: true, force: true });
  });

  describe.each(CHAIN)('apps/%s', (app) => {
    let copy: AppCopy;

    beforeAll(async () => {
      const pending = (async () => {
        const copied = await AppCopy.copy(app, join(work, app));
        await copied.install(packedPackages());
        return copied;
      })();
      copies.set(app, pending);
      copy = await pending;
    }, 600_000);

    it('builds and lints with its own scripts and configuration, and passes its own tests against Redis, PostgreSQL and RabbitMQ', async () => {
      await copy.run('build');
      expect(await copy.run('lint')).toMatch(/^> oxlint --type-aware src\/$/m);
      const output = await copy.run('test', SERVICES);
      // npm echoes the script it runs: the app's own test command, whatever its runner.
      expect(output.split('\n')).toContain(`> ${await copy.script('test')}`);
      expect(output).toMatch(/^> vitest run$/m);
    }, 600_000);

    // The same install on the other releases: npm, tsc, Vitest and the app itself all run on that Node.js.
    it.each(newestReleases().filter((node) => node.version !== HOST_NODE.version))(
      'passes its own tests on Node.js $version',
      async (node) => {
        const env = pathFor(node);
        // npm itself runs on that release, and hands it to every script it starts.
        expect(await copy.run('env', env, `env on ${node.version}`)).toContain(`\nnpm_node_execpath=${node.binary}\n`);
        const output = await copy.run('test', { ...SERVICES, ...env }, `test on ${node.version}`);
        expect(output).toMatch(/^> vitest run$/m);
      },
      600_000,
    );

    it.each(appReleases(app))(
      "starts with its README's command on Node.js $version and answers GET /health",
      async (node) => {
        expect((await readmeStartCommand(copy.folder)).argv).toEqual(['node', 'dist/main.js']);
        expect(await copy.startedHealth(node, SERVICES)).toMatchObject({ status: 200, body: { status: 'ok' } });
      },
      180_000,
    );
  });

  // The verifier from its tarball, on each release, starting the three copies on that release.
  it.each(newestReleases())(
    `the three copies, wired through the verifier's fault proxies on Node.js $version, charge once under a slow first attempt and a lost reply`,
    async (node) => {
      const config = await chainConfig(node, copies);
      const run = await (await verifier).run(node, config, join(work, `chain-${node.version}`));
      const scenario = run.report?.scenarios[0];
      const outcomes = (hop: AppName) => scenario?.attempts.filter((a) => a.hop === hop).map((a) => a.outcome) ?? [];

      expect({ exitCode: run.exitCode, error: scenario?.error }, run.output).toEqual({ exitCode: 0, error: undefined });
      // The faults happened: payments' first answer came after orders gave up, orders' first reply was lost.
      expect(outcomes('payments')).toEqual(expect.arrayContaining(['caller-gone', 'answered']));
      expect(outcomes('orders')).toEqual(expect.arrayContaining(['reply-lost', 'answered']));
      expect({ effects: scenario?.intents[0]?.effects, passed: scenario?.passed, violations: scenario?.violations }).toEqual({
        effects: 1,
        passed: true,
        violations: [],
      });
    },
    600_000,
  );
});

/**
 * The chain config for the verifier: each copy started on `node` with its
 * README's command behind a fault proxy, and the write-up's faults.
 */
async function chainConfig(node: NodeRelease, copies: Map<AppName, Promise<AppCopy>>): Promise<unknown> {
  const ports = await freePorts(6);
  const [gateway, orders, payments, gatewayProxy, ordersProxy, paymentsProxy] = ports as [number, number, number, number, number, number];
  const token = () => randomBytes(16).toString('hex');
  const credentials = { apiKey: token(), orders: token(), payments: token() };
  const chainEnv = {
    GATEWAY_API_KEYS: JSON.stringify({ [credentials.apiKey]: 'acct-1' }),
    ORDERS_TOKEN: credentials.orders,
    PAYMENTS_TOKEN: credentials.payments,
    LOG_LEVEL: 'silent',
  };
  // Each service runs from its copy, with its README's command.
  const service = async (app: AppName, port: number, env: Record<string, string>) => {
    const copy = await copies.get(app)!;
    const command = await readmeStartCommand(copy.folder);
    const [file, ...args] = command.argv as [string, ...string[]];
    return {
      start: [file === 'node' ? node.binary : file, ...args],
      cwd: copy.folder,
      env: { ...chainEnv, PORT: String(port), HOST: '127.0.0.1', ...env },
      health: `http://127.0.0.1:${port}/health`,
      startTimeoutMs: 60_000,
    };
  };
  return {
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
        service: await service('gateway', gateway, { IDEMPOTENCY_STORE: 'memory', ORDERS_URL: `http://127.0.0.1:${ordersProxy}` }),
      },
      {
        name: 'orders',
        listen: `127.0.0.1:${ordersProxy}`,
        upstream: `http://127.0.0.1:${orders}`,
        service: await service('orders', orders, { IDEMPOTENCY_STORE: 'memory', PAYMENTS_URL: `http://127.0.0.1:${paymentsProxy}` }),
      },
      // 1.5 s: past orders' 300 ms and the gateway's 600 ms timeouts, as in the write-up.
      {
        name: 'payments',
        listen: `127.0.0.1:${paymentsProxy}`,
        upstream: `http://127.0.0.1:${payments}`,
        holdMs: 1500,
        // payments keeps its records and its ledger in PostgreSQL.
        service: await service('payments', payments, { IDEMPOTENCY_STORE: 'postgres', DATABASE_URL: SERVICES.DATABASE_URL }),
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
  };
}
