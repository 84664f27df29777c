import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { resultsUnder, runCommand, startCommand, tempRoot } from './cli.test-support';
import { pings } from '@idempotency-chain/local-processes';

vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

/** The port of the redis-server the run says it started. */
function ownRedisPort(stderr: string): number {
  const port = /^store: redis \(redis-server pid \d+ on redis:\/\/127\.0\.0\.1:(\d+)/m.exec(stderr)?.[1];
  if (!port) throw new Error(`the run did not say it started its own redis-server:\n${stderr}`);
  return Number(port);
}

/** A process that is gone, or a zombie nobody reaped yet: either way, no longer running. */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function childrenOf(pid: number): number[] {
  const out = execFileSync('ps', ['--ppid', String(pid), '-o', 'pid='], { encoding: 'utf8' }).trim();
  return out ? out.split(/\s+/).map(Number) : [];
}

describe('without REDIS_URL', () => {
  it('runs the Redis-only scenarios on a redis-server of its own, and stops it at the end', async () => {
    const root = tempRoot('own-redis');
    const run = await runCommand('main.js', ['--out', root], { REDIS_URL: undefined, SCENARIOS: 'crash-after-side-effect' });
    expect({ code: run.code, stderr: run.code === 0 ? '' : run.stderr }).toEqual({ code: 0, stderr: '' });
    const results = resultsUnder(root);
    expect(results.environment).toMatchObject({ store: 'redis', storeNote: 'its own redis-server, as REDIS_URL was not set' });
    const crash = results.failures.find((f) => f.id === 'crash-after-side-effect')!;
    expect(crash.skipped).toBeUndefined();
    expect(crash.variants.map((v) => v.charges)).toEqual(crash.variants.map((v) => v.expectedCharges));
    expect(await pings(ownRedisPort(run.stderr))).toBe(false);
  });

  it('stopped by SIGTERM, writes nothing and leaves no service or redis-server behind', async () => {
    const root = tempRoot('sigterm');
    const command = startCommand('main.js', ['--out', root], { REDIS_URL: undefined, SCENARIOS: 'write-up' });
    while (!command.stderr().includes('write-up: policy none: ')) {
      if (command.child.exitCode !== null) throw new Error(`the run ended early: ${command.stderr()}`);
      await sleep(100);
    }
    // The lab of the next policy is starting or running: three services and the redis-server are children now.
    const port = ownRedisPort(command.stderr());
    const children = childrenOf(command.child.pid!);
    expect(children.length).toBeGreaterThanOrEqual(1);
    command.child.kill('SIGTERM');
    const ended = await command.done;
    expect(ended.code).toBe(143);
    expect(ended.stderr).toContain('stopped by SIGTERM: nothing written');
    // The run SIGKILLs its children as it exits: each ends soon after, but on a loaded machine not always before
    // the run's own exit is seen here. Gone within 10 s, or the assertion below names who stayed.
    for (const deadline = Date.now() + 10_000; children.some(running) && Date.now() < deadline;) await sleep(50);
    expect(children.filter(running)).toEqual([]);
    expect(await pings(port)).toBe(false);
    expect(existsSync(join(root, 'RESULTS.md'))).toBe(false);
  });
});
