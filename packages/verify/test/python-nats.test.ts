import { AckPolicy, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkMarkdownFile } from '@idempotency-chain/diagram-check';
import type { RunReport } from '../src/run/report';
import { builtCli } from './support/cli';
import { freePorts } from './support/free-port';
import { pythonImports } from './support/python-imports';
import { queueScenario } from './support/queue-scenario';

const NATS_URL = process.env.NATS_URL || 'nats://127.0.0.1:4222';
const NATS_ADDRESS = new URL(NATS_URL).host;

/** The queued payment in Python: orders publishes to JetStream, payments pulls, charges and acks. */
const CHAIN = join(__dirname, 'fixtures', 'python-nats', 'chain.py');

/**
 * The NATS hop's proof from outside: a JetStream consumer in Python (its own socket, the
 * NATS text protocol, a SQLite ledger) behind the verifier's NATS proxy, an HTTP orders
 * service publishing to it behind an HTTP hop, both started by the verifier, and the
 * built CLI run as a team's CI would run it. Only the verifier's JSON report is read back.
 */
describe('a Python JetStream consumer verified from outside', () => {
  let dir: string;
  let connection: NatsConnection;
  let manager: JetStreamManager;
  const streams: string[] = [];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'verify-python-nats-'));
    connection = await connect({ servers: [NATS_URL] });
    manager = await jetstreamManager(connection);
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    for (const stream of streams) await manager.streams.delete(stream).catch(() => undefined);
    await connection?.close();
  });

  /** Runs the built CLI on a fresh stream and consumer for `mode`; returns its exit code and JSON report. */
  async function verify(mode: 'naive' | 'keyed') {
    const run = randomBytes(4).toString('hex');
    const [stream, subject, consumer] = [`VFY_CHARGES_${run}`, `vfy.${run}.charges`, 'payments'];
    streams.push(stream);
    await manager.streams.add({ name: stream, subjects: [subject] });
    // A short ack wait: a lost ack is redelivered after it, and each scenario waits for that.
    await manager.consumers.add(stream, { durable_name: consumer, ack_policy: AckPolicy.Explicit, ack_wait: nanos(2000) });
    const [orders = 0, ordersProxy = 0, payments = 0, natsProxy = 0] = await freePorts(4);
    const python = (role: string, ...args: string[]) => ['python3', CHAIN, role, ...args];
    const config = {
      entry: { url: `http://127.0.0.1:${ordersProxy}/checkout`, body: { orderId: '{{intentId}}', amount: 1200 }, timeoutMs: 10_000 },
      hops: [
        {
          name: 'orders',
          listen: `127.0.0.1:${ordersProxy}`,
          upstream: `http://127.0.0.1:${orders}`,
          // Orders publishes to the server itself: only the consumer's side goes through the verifier.
          service: {
            start: python('orders', '--port', String(orders), '--nats', NATS_ADDRESS, '--subject', subject),
            health: `http://127.0.0.1:${orders}/health`,
          },
        },
      ],
      queue: {
        name: 'payments',
        broker: NATS_URL,
        listen: `127.0.0.1:${natsProxy}`,
        stream,
        consumer,
        keyHeader: 'Idempotency-Key',
        service: {
          start: python(
            'payments',
            ...['--mode', mode, '--port', String(payments), '--nats', `127.0.0.1:${natsProxy}`],
            ...['--stream', stream, '--consumer', consumer, '--db', join(dir, `${mode}-${run}.sqlite`)],
          ),
          health: `http://127.0.0.1:${payments}/health`,
        },
      },
      effect: { http: { url: `http://127.0.0.1:${payments}/charges?order={{intentId}}`, path: '$.count' } },
      settle: { quietMs: 1500, timeoutMs: 60_000 },
      scenarios: ['lost-ack', 'duplicate-delivery', 'kill-before-ack'],
    };
    const file = join(dir, `${mode}-${run}.json`);
    writeFileSync(file, JSON.stringify(config));
    const reportDir = join(dir, `${mode}-${run}-report`);
    const started = performance.now();
    const child = spawn(process.execPath, [builtCli(), 'run', file, '--report-dir', reportDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    const output: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
    const [code] = (await once(child, 'exit')) as [number | null];
    const text = Buffer.concat(output).toString('utf8');
    process.stdout.write(`--- python JetStream consumer, ${mode}: ${((performance.now() - started) / 1000).toFixed(1)}s\n${text}\n`);
    if (code !== 0 && code !== 1) throw new Error(`the verifier could not run the chain (exit ${code}): ${text}`);
    const report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as RunReport;
    const scenario = (name: string) => queueScenario(report, name, 'payments');
    const markdown = join(reportDir, 'report.md');
    return {
      code,
      text,
      junit: readFileSync(join(reportDir, 'junit.xml'), 'utf8'),
      diagrams: await checkMarkdownFile(markdown),
      lostAck: scenario('lost-ack@payments'),
      duplicate: scenario('duplicate-delivery@payments'),
      kill: scenario('kill-before-ack@payments'),
    };
  }

  it("is written with Python's standard library only", () => {
    const found = pythonImports(CHAIN);
    expect(found.imported).toEqual(expect.arrayContaining(['socket', 'sqlite3']));
    expect(found.foreign).toEqual([]);
  });

  it('fails the naive consumer on lost-ack, duplicate-delivery and kill-before-ack, passes the keyed one', async () => {
    // Side by side: each run has its own stream, consumer, ports and ledger, and spends its time
    // waiting out ack waits and quiet periods, not computing.
    const [naive, keyed] = await Promise.all([verify('naive'), verify('keyed')]);
    for (const run of [naive, keyed]) {
      for (const s of [run.lostAck, run.duplicate, run.kill]) expect([s.error, s.notExercised]).toEqual([undefined, undefined]);
      // The ack lost (or held through the kill): JetStream delivered the same stream message again.
      for (const s of [run.lostAck, run.kill]) {
        expect(s.sequences).toHaveLength(2);
        expect(new Set(s.sequences).size).toBe(1);
      }
      expect(run.lostAck.deliveries).toEqual(['d1 ack-lost', 'd2 redelivered acked']);
      expect(run.kill.deliveries).toEqual(['d1 killed-before-ack', 'd2 redelivered acked']);
      for (const s of [run.lostAck, run.kill]) expect(s.counts).toEqual([1, 2]);
      // The copies are new messages in the stream, delivered once each, with the original's key.
      expect(run.duplicate.deliveries).toEqual(['d1 acked', 'd2 copy of d1 acked', 'd3 copy of d1 acked']);
      expect(run.duplicate.counts).toEqual([1, 1, 1]);
      expect(new Set(run.duplicate.sequences).size).toBe(3);
      expect(new Set(run.duplicate.keys).size).toBe(1);
      expect(run.duplicate.keys?.[0]).toMatch(/^[0-9a-f]{8}$/);
    }
    // Naive: each delivery charged, counted by the verifier from payments' own ledger.
    expect(naive.code).toBe(1);
    expect(naive.lostAck).toMatchObject({ passed: false, effects: 2, broken: ['effects'] });
    expect(naive.duplicate).toMatchObject({ passed: false, effects: 3, broken: ['effects'] });
    expect(naive.kill).toMatchObject({ passed: false, effects: 2, broken: ['effects'] });
    // Keyed: the key stored with the charge before the ack; a delivery of a stored key only acks.
    expect(keyed.code).toBe(0);
    for (const s of [keyed.lostAck, keyed.duplicate, keyed.kill]) expect(s).toMatchObject({ passed: true, effects: 1, broken: [] });
    expect(keyed.text).toContain('3/3 scenarios passed');
    for (const run of [naive, keyed]) {
      // Each delivery as JetStream numbers it, in the terminal, JUnit and the diagrams Mermaid itself reads back whole.
      expect(run.text).toMatch(/payments d2 seq=(\d+) n=2 redelivered \S+ k=[0-9a-f]{8} -> ack/);
      expect(run.junit).toMatch(/payments d1 seq=\d+ n=1 \S+ k=[0-9a-f]{8} \[lose ack\] -&#62; ack lost/);
      expect(run.diagrams.errors).toEqual([]);
      expect(run.diagrams.diagrams).toBe(3);
      expect(run.diagrams.messages.filter((m) => !m.whole)).toEqual([]);
      expect(run.diagrams.messages.map((m) => m.parsed)).toEqual(
        expect.arrayContaining([expect.stringMatching(/^payments d2 seq=\d+ n=2 redelivered k=/)]),
      );
    }
  }, 300_000);
});
