import { setTimeout as sleep } from 'node:timers/promises';
import { parseConfig } from '../src/config/load';
import type { Attempt } from '../src/proxy/attempt';
import { unexercised } from '../src/run/exercised';
import { runChain } from '../src/run/runner';
import { ServiceProcess } from '../src/run/service';
import { freePort, freePorts } from './support/free-port';
import { oneHopChain } from './support/one-hop-chain';
import { startUpstream, type Upstream } from './support/upstream';

/** A one-hop chain in front of `upstream`, with fields of the entry and the hop replaced. */
const chain = (proxy: number, upstream: string, fields: { entry?: object; hop?: object; scenarios: string[] }) =>
  parseConfig(
    JSON.stringify({
      entry: { url: `http://127.0.0.1:${proxy}/charges`, body: { orderId: '{{intentId}}' }, timeoutMs: 3000, retries: 1, ...fields.entry },
      hops: [{ name: 'payments', listen: `127.0.0.1:${proxy}`, upstream, ...fields.hop }],
      effect: { command: [process.execPath, '-e', 'console.log(1)'] },
      settle: { quietMs: 200, timeoutMs: 10000 },
      scenarios: fields.scenarios,
    }),
    'chain.json',
  );

describe('a fault that did not take effect', () => {
  let upstream: Upstream;
  beforeAll(async () => (upstream = await startUpstream()));
  afterAll(() => upstream.close());

  it('fails the write-up as not exercised when the hold outlasted no timeout, naming holdMs', async () => {
    // The caller waits 3 s; a 100 ms hold makes no caller give up.
    const config = chain(await freePort(), upstream.url, { hop: { holdMs: 100 }, scenarios: ['write-up'] });
    const [scenario] = (await runChain(config, { configFile: 'chain.json' })).scenarios;
    expect(scenario?.passed).toBe(false);
    expect(scenario?.notExercised).toEqual([
      expect.stringMatching(/^hold at payments: payments held its answer 100ms .*entry\.timeoutMs 3000ms.*set hops\.0\.holdMs/),
    ]);
  });

  it('passes the write-up when the hold outlasts the caller', async () => {
    const config = chain(await freePort(), upstream.url, {
      entry: { timeoutMs: 300, retries: 2 },
      hop: { holdMs: 800 },
      scenarios: ['write-up'],
    });
    const [scenario] = (await runChain(config, { configFile: 'chain.json' })).scenarios;
    expect(scenario?.notExercised).toBeUndefined();
  });

  it('fails a reset that hit nothing: the caller presses past the proxy', async () => {
    const config = chain(await freePort(), upstream.url, { entry: { url: `${upstream.url}/charges` }, scenarios: ['reset'] });
    const [scenario] = (await runChain(config, { configFile: 'chain.json' })).scenarios;
    expect(scenario?.passed).toBe(false);
    expect(scenario?.notExercised).toEqual([expect.stringMatching(/reset at payments: no attempt reached its proxy .*entry\.url/)]);
  });

  it('fails a kill that never ran: the service fell over before it answered', async () => {
    const [port, proxy] = (await freePorts(2)) as [number, number];
    // Healthy, then gone at the first POST: the proxy never gets the answer it kills after.
    const start = `require('http').createServer((q, s) => q.method === 'POST' ? process.exit(0) : s.end('ok')).listen(${port}, '127.0.0.1');`;
    const config = oneHopChain({ port, proxy, start, scenarios: ['kill'] });
    const [scenario] = (await runChain(config, { configFile: 'chain.json' })).scenarios;
    expect(scenario?.passed).toBe(false);
    expect(scenario?.notExercised).toEqual([expect.stringMatching(/kill at payments: its service never answered/)]);
  });
});

describe('a duplicate or a retry that never ran beside the first attempt', () => {
  const config = chain(1, 'http://127.0.0.1:2', { scenarios: ['duplicate'] });
  const attempt = (fields: Partial<Attempt>): Attempt => ({
    seq: 1,
    scenario: 's',
    intent: 'i',
    hop: 'payments',
    attempt: 1,
    method: 'POST',
    path: '/charges',
    keyHash: null,
    faults: [],
    status: 201,
    outcome: 'answered',
    startedMs: 0,
    endedMs: 1,
    ...fields,
  });

  it('fails a duplicate whose copy reached the service only after the original left it', () => {
    const original = attempt({ faults: ['duplicate x1'] });
    const copy = attempt({ attempt: 2, duplicateOf: 1, outcome: 'caller-gone' });
    const planned = new Map([['payments', [{ kind: 'duplicate', copies: 1 } as const]]]);
    expect(unexercised(planned, [original, copy], config)).toEqual([
      "duplicate at payments: no copy reached payments's service while the original was still there",
    ]);
    expect(unexercised(planned, [original, { ...copy, concurrentWith: [1] }], config)).toEqual([]);
  });

  it('fails a held attempt that no retry of its caller joined', () => {
    const held = attempt({ faults: ['hold for retry'], outcome: 'caller-gone' });
    const planned = new Map([['payments', [{ kind: 'hold-for-retry', maxMs: 10_000 } as const]]]);
    expect(unexercised(planned, [held], config)).toEqual([
      'retry-while-running at payments: no retry arrived within 10000ms while the first attempt was held; the verifier (entry.key.send, entry.retries) did not retry it',
    ]);
    expect(unexercised(planned, [held, attempt({ attempt: 2, concurrentWith: [1] })], config)).toEqual([]);
  });
});

describe('a kill with nothing to kill', () => {
  it('is an error, not a crash survived', async () => {
    const port = await freePort();
    // Answers its health check, then exits by itself.
    const script = `require('http').createServer((q, s) => s.end('ok', () => process.exit(0))).listen(${port}, '127.0.0.1')`;
    const service = new ServiceProcess('svc', {
      start: [process.execPath, '-e', script],
      env: {},
      health: `http://127.0.0.1:${port}/health`,
      startTimeoutMs: 20_000,
    });
    await service.start();
    // Bounded: the process exits right after the answer it already sent.
    const deadline = Date.now() + 10_000;
    while (
      Date.now() < deadline &&
      (await fetch(`http://127.0.0.1:${port}/`).then(
        () => true,
        () => false,
      ))
    )
      await sleep(50);
    await expect(service.kill()).rejects.toThrow(/^not exercised: service svc did not answer .* nothing to kill$/);
  });
});
