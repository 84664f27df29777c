import { connect } from 'amqplib';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../src/cli';
import type { RunReport } from '../src/run/report';
import { freePorts } from './support/free-port';
import { builtLab, labChain } from './support/lab-chain';
import { captureOutput } from './support/output';
import { queueScenario } from './support/queue-scenario';

const AMQP_URL = process.env.AMQP_URL || 'amqp://guest:guest@127.0.0.1:5672';

/**
 * The lab's queued payment verified from outside: gateway and orders over HTTP, each
 * behind a fault proxy; orders publishes the charge to RabbitMQ, and payments consumes
 * it through the verifier's AMQP proxy (its AMQP_URL points there). As the lab's own
 * `queue-redelivery` scenario, naive (no key, the plain ledger) and with the key in the
 * message's headers and `@Idempotent` on the consumer.
 */
/** What one run found for one queue scenario. */
type Found = ReturnType<typeof queueScenario>;

/** The three queue scenarios of one run. */
interface Verified {
  code: number;
  lostAck: Found;
  duplicate: Found;
  kill: Found;
}

/** AMQP_URL with the queue proxy's address in place of the broker's, the user and password kept. */
function viaProxy(port: number): string {
  const url = new URL(AMQP_URL);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return url.toString();
}

describe('the lab queued payment verified from outside', () => {
  let dir: string;
  const queues: string[] = [];
  beforeAll(() => {
    builtLab();
    dir = mkdtempSync(join(tmpdir(), 'verify-lab-queue-'));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    const connection = await connect(AMQP_URL);
    const channel = await connection.createChannel();
    for (const queue of queues) {
      await channel.deleteQueue(queue);
      await channel.deleteQueue(`${queue}.dead`);
    }
    await connection.close();
  });

  /** Runs the verifier on the lab; `bypass` points payments at the broker itself, past the queue proxy. */
  async function verify(variant: string, env: Record<string, string>, scenarios: string[], bypass = false) {
    const [gateway = 0, orders = 0, payments = 0, gatewayProxy = 0, ordersProxy = 0, amqpProxy = 0] = await freePorts(6);
    const queue = `verify.charges.${randomUUID().slice(0, 8)}`;
    queues.push(queue);
    const lab = labChain({ CHARGE_TRANSPORT: 'amqp', CHARGE_QUEUE: queue, ...env });
    const service = lab.service;
    const config = join(dir, `${variant}.json`);
    writeFileSync(
      config,
      JSON.stringify({
        entry: lab.entry(gatewayProxy, 15_000),
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
            // Orders publishes to the broker itself: only the consumer's side goes through the verifier.
            service: service('orders', orders, { AMQP_URL }),
          },
        ],
        queue: {
          name: 'payments',
          broker: AMQP_URL,
          listen: `127.0.0.1:${amqpProxy}`,
          queue,
          // Payments' broker is the queue proxy, which passes its connection on to AMQP_URL. Its records
          // and ledger are in Redis, as in the lab's queue-redelivery: they must outlive a killed consumer,
          // whose redelivery waits out the dead one's lease (2 s, not the default 10 s).
          service: service('payments', payments, {
            AMQP_URL: bypass ? AMQP_URL : viaProxy(amqpProxy),
            IDEMPOTENCY_STORE: 'redis',
            REDIS_URL: process.env.REDIS_URL || 'redis://127.0.0.1:6379',
            IDEMPOTENCY_LEASE_MS: '2000',
          }),
        },
        effect: lab.effect(payments),
        settle: { quietMs: 1500 },
        scenarios,
      }),
    );
    const out = captureOutput();
    const reportDir = join(dir, `${variant}-report`);
    const started = performance.now();
    const code = await main(['run', config, '--report-dir', reportDir], out, out);
    if (code === 2) throw new Error(`the verifier could not run the lab: ${out.text()}`);
    const report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as RunReport;
    process.stdout.write(`--- lab queued payment, ${variant}: ${((performance.now() - started) / 1000).toFixed(1)}s\n${out.text()}\n`);
    const scenario = (name: string) => {
      const found = queueScenario(report, name, 'payments');
      expect(found.error).toBeUndefined();
      return found;
    };
    return { code, scenario };
  }

  it('fails lost-ack, duplicate-delivery and kill-before-ack with the naive consumer, passes them with @Idempotent', async () => {
    const all = ['lost-ack', 'duplicate-delivery', 'kill-before-ack'];
    const naiveRun = await verify('naive', { KEY_POLICY: 'none', LAB_NAIVE: 'plain-ledger' }, all);
    const keyedRun = await verify('idempotent', { KEY_POLICY: 'propagated' }, all);
    const [naive, keyed] = [naiveRun, keyedRun].map(({ code, scenario }) => ({
      code,
      lostAck: scenario('lost-ack@payments'),
      duplicate: scenario('duplicate-delivery@payments'),
      kill: scenario('kill-before-ack@payments'),
    })) as [Verified, Verified];
    for (const run of [naive, keyed]) {
      expect([run.lostAck.notExercised, run.duplicate.notExercised, run.kill.notExercised]).toEqual([undefined, undefined, undefined]);
    }
    // The lab's queue-redelivery counts 2 for one redelivery to the naive consumer: so does a lost ack.
    expect(naive.code).toBe(1);
    expect(naive.lostAck).toMatchObject({ passed: false, effects: 2, broken: ['effects'] });
    expect(naive.lostAck.deliveries).toEqual(['d1 ack-lost', 'd2 redelivered acked']);
    // The original and its two copies, each charged.
    expect(naive.duplicate).toMatchObject({ passed: false, effects: 3, broken: ['effects'] });
    expect(naive.duplicate.deliveries).toEqual(['d1 acked', 'd2 copy of d1 acked', 'd3 copy of d1 acked']);
    expect(keyed.code).toBe(0);
    expect(keyed.lostAck).toMatchObject({ passed: true, effects: 1, broken: [] });
    expect(keyed.lostAck.deliveries).toEqual(['d1 ack-lost', 'd2 redelivered acked']);
    expect(keyed.duplicate).toMatchObject({ passed: true, effects: 1, broken: [] });
    expect(keyed.duplicate.deliveries).toEqual(['d1 acked', 'd2 copy of d1 acked', 'd3 copy of d1 acked']);
    // Killed with its ack in hand: the lab's queue-redelivery counts 2 naive, 1 with @Idempotent (the
    // redelivery takes over the dead consumer's record once its lease ran out; the ledger answers).
    expect(naive.kill).toMatchObject({ passed: false, effects: 2, broken: ['effects'] });
    expect(keyed.kill).toMatchObject({ passed: true, effects: 1, broken: [] });
    for (const run of [naive, keyed]) expect(run.kill.deliveries).toEqual(['d1 killed-before-ack', 'd2 redelivered acked']);
  }, 600_000);

  it('fails lost-ack as not exercised when the consumer reads the broker past the queue proxy', async () => {
    const { code, scenario } = await verify('bypass', { KEY_POLICY: 'propagated' }, ['lost-ack'], true);
    expect(code).toBe(1);
    expect(scenario('lost-ack@payments')).toMatchObject({ passed: false, effects: 1, deliveries: [] });
    expect(scenario('lost-ack@payments').notExercised).toEqual([
      expect.stringMatching(
        /^lose ack at payments: no delivery reached the consumer through queue\.listen \(127\.0\.0\.1:\d+\); point the consumer's broker URL at it/,
      ),
    ]);
  }, 600_000);
});
