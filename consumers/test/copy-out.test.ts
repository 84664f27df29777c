import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, freePorts } from '@idempotency-chain/local-processes';
import { parseConfig, runChain } from '@idempotency-chain/verify';
import { AppCopy, readmeStartCommand, startApp, type StartCommand } from './app-copy';
import { packedLibraries } from './library-tarballs';

/** The apps a team can copy alone: the chain, outermost first. */
const CHAIN = ['gateway', 'orders', 'payments'] as const;
type AppName = (typeof CHAIN)[number];

/** The services the apps' own tests reach, as CI provides them. */
const SERVICES = {
  REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  AMQP_URL: process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
};

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

describe('each app copied alone out of the workspace', () => {
  let work: string;
  const copies = new Map<AppName, Promise<AppCopy>>();

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'idempotency-copy-out-'));
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
      const pending = AppCopy.copy(app, join(work, app), packedLibraries());
      copies.set(app, pending);
      copy = await pending;
      await copy.install();
    }, 600_000);

    it('builds and lints with its own scripts and configuration, and passes its own tests against Redis, PostgreSQL and RabbitMQ', async () => {
      await copy.run('build');
      expect(await copy.run('lint')).toMatch(/^> oxlint --type-aware src\/$/m);
      const output = await copy.run('test', SERVICES);
      // npm echoes the script it runs: the app's own test command, whatever its runner.
      expect(output.split('\n')).toContain(`> ${await copy.script('test')}`);
      expect(output).toMatch(/^> vitest run$/m);
    }, 600_000);

    it("starts with its README's command and answers GET /health", async () => {
      const command = await readmeStartCommand(copy.folder);
      expect(command.argv).toEqual(['node', 'dist/main.js']);
      const started = await copy.timed('start', async () =>
        startApp(copy.folder, { ...command, env: { ...command.env, ...SERVICES } }, await freePort()),
      );
      try {
        const health = await fetch(`${started.baseUrl}/health`);
        expect(health.status).toBe(200);
        expect(await health.json()).toMatchObject({ status: 'ok' });
      } finally {
        await started.stop();
      }
    }, 180_000);
  });

  it(`the three copies, wired through the verifier's fault proxies, charge once under a slow first attempt and a lost reply`, async () => {
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
    const start = async (app: AppName): Promise<{ cwd: string; command: StartCommand }> => {
      const copy = await copies.get(app)!;
      return { cwd: copy.folder, command: await readmeStartCommand(copy.folder) };
    };
    const service = async (app: AppName, port: number, env: Record<string, string>) => {
      const { cwd, command } = await start(app);
      const [file, ...args] = command.argv as [string, ...string[]];
      return {
        start: [file === 'node' ? process.execPath : file, ...args],
        cwd,
        env: { ...chainEnv, PORT: String(port), HOST: '127.0.0.1', ...env },
        health: `http://127.0.0.1:${port}/health`,
        startTimeoutMs: 60_000,
      };
    };
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
      }),
      'copy-out.json',
    );
    const run = await runChain(config, { configFile: 'copy-out.json' });
    const scenario = run.scenarios[0];

    const outcomes = (hop: AppName) => scenario?.attempts.filter((a) => a.hop === hop).map((a) => a.outcome) ?? [];

    expect(scenario?.error).toBeUndefined();
    // The faults happened: payments' first answer came after orders gave up, orders' first reply was lost.
    expect(outcomes('payments')).toEqual(expect.arrayContaining(['caller-gone', 'answered']));
    expect(outcomes('orders')).toEqual(expect.arrayContaining(['reply-lost', 'answered']));
    expect({ effects: scenario?.intents[0]?.effects, passed: scenario?.passed, violations: scenario?.violations }).toEqual({
      effects: 1,
      passed: true,
      violations: [],
    });
  }, 600_000);
});
