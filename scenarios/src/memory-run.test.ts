import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { resultsUnder, runCommand, tempRoot, type CommandResult } from './cli.test-support';
import type { ResultsFile } from './results-file';

// Every scenario that can run on the in-memory store: minutes on a loaded machine.
vi.setConfig({ testTimeout: 900_000, hookTimeout: 900_000 });

/** The scenarios that cannot run without a shared store, and must say so rather than fail. */
const NEED_REDIS = ['replicas', 'crash-after-side-effect', 'lease-lost', 'store-outage', 'queue-redelivery', 'nats-redelivery'];

describe('a run with no Redis at all (no REDIS_URL, no redis-server, no container runtime)', () => {
  let run: CommandResult;
  let results: ResultsFile;

  beforeAll(async () => {
    const root = tempRoot('memory');
    run = await runCommand('main.js', ['--out', root], {
      REDIS_URL: undefined,
      SCENARIOS: undefined,
      REDIS_SERVER: '/nonexistent/redis-server',
      DOCKER_HOST: 'unix:///nonexistent/docker.sock',
    });
    results = resultsUnder(root);
    expect(readFileSync(join(root, 'RESULTS.md'), 'utf8')).toContain('store **memory**');
  });

  it('falls back to the in-memory store, says why, and exits 0', () => {
    expect({ code: run.code, stderr: run.code === 0 ? '' : run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(results.environment.store).toBe('memory');
    expect(results.environment.storeNote).toMatch(/no REDIS_URL, .*redis-server is not installed.*no container runtime/);
  });

  it('skips exactly the scenarios that need Redis (or a broker that is not there), each saying why', () => {
    const skipped = results.failures.filter((f) => f.skipped);
    for (const id of NEED_REDIS) expect(skipped.map((f) => f.id)).toContain(id);
    for (const f of skipped)
      expect({ id: f.id, reason: f.skipped }).toEqual({
        id: f.id,
        reason: expect.stringMatching(/^needs Redis|^RabbitMQ not reachable|^NATS not reachable/),
      });
    expect(run.stdout).toContain(`skipped ${skipped.length} scenario(s), as this machine lacks what they need:`);
  });

  it('gets the expected charges in the write-up and in every scenario that ran', () => {
    expect(results.writeUp!.policies.map((p) => p.charges)).toEqual([4, 2, 1, 1]);
    const ran = results.failures.filter((f) => !f.skipped);
    expect(ran.map((f) => f.id)).toEqual(
      expect.arrayContaining(['double-click', 'key-reuse', 'failure-before-commit', 'retention', 'retry-multiplication']),
    );
    const counts = ran.flatMap((f) => f.variants.map((v) => `${f.id} | ${v.variant} | ${v.charges}`));
    expect(counts).toEqual(ran.flatMap((f) => f.variants.map((v) => `${f.id} | ${v.variant} | ${v.expectedCharges}`)));
  });
});
