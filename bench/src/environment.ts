import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { cpus, loadavg, platform, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { DATABASE_URL, pgHost } from './pg-tools';
import { connect, info, REDIS_URL } from './redis-tools';
import { percentile } from './stats';

/** The repository's root: BENCHMARKS.md is written there. */
export const REPO_ROOT = join(__dirname, '..', '..');

/** What a run records about where and how it ran. */
export interface Environment {
  date: string;
  commit: string;
  cpu: string;
  machine: string;
  node: string;
  redis: string;
  postgres: string;
  packages: Array<[string, string]>;
  command: string;
  /** What one system call and one Redis round trip cost here: the unit every figure is made of. */
  probes: string;
  /** The 1-minute load average when the run started: above the core count, other work competed with every figure. */
  loadAtStart: number;
  /** p99 of a sequential Redis PING at the start, in µs: the floor under every round trip of the run. */
  pingP99Us: number;
}

/** Nanoseconds per `write(2)` of one byte to /dev/null. */
function syscallNs(): number {
  const fd = openSync('/dev/null', 'w');
  const byte = Buffer.from('x');
  const count = 50_000;
  const started = process.hrtime.bigint();
  for (let i = 0; i < count; i++) writeSync(fd, byte);
  const ns = Number(process.hrtime.bigint() - started) / count;
  closeSync(fd);
  return ns;
}

const PACKAGES = [
  '@idempotency-chain/idempotency',
  '@nestjs/core',
  '@nestjs/platform-fastify',
  'fastify',
  'ioredis',
  'autocannon',
  '@node-idempotency/nestjs',
  '@node-idempotency/storage-adapter-redis',
  'redis',
  '@aws-lambda-powertools/idempotency',
  '@redis/client',
  'pg',
  'vega',
  'vega-lite',
];

/** The installed version of a package, as the run used it. */
export function versionOf(name: string): string {
  for (const dir of [join(REPO_ROOT, 'bench', 'node_modules'), join(REPO_ROOT, 'node_modules')]) {
    const file = join(dir, name, 'package.json');
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  }
  return 'not found';
}

/** ", a Firecracker microVM" when the kernel says so: its system calls cost more than bare metal's. */
function virtualisation(): string {
  try {
    return readFileSync('/proc/cmdline', 'utf8').includes('firecracker') ? ' (a Firecracker microVM)' : '';
  } catch {
    return '';
  }
}

function git(...args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

/** `url` with its password, if any, replaced by `***`. */
function masked(url: string): URL {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed;
}

/** The PostgreSQL server's version, or why there is none. */
async function postgresVersion(): Promise<string> {
  const client = new Client({ connectionString: DATABASE_URL });
  try {
    await client.connect();
    const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
    return `${rows[0]?.server_version ?? '?'} at ${pgHost()}`;
  } catch (error) {
    return `not reachable at ${pgHost()} (${(error as Error).message})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The machine, the versions and the command of this run, for the record. */
export async function collectEnvironment(): Promise<Environment> {
  const client = await connect();
  const server = await info(client, 'server');
  const pings: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const started = performance.now();
    await client.ping();
    pings.push((performance.now() - started) * 1000);
  }
  await client.quit();
  const pingP99Us = percentile(pings.slice(200), 99);
  const probes =
    `one \`write(2)\` to /dev/null ${(syscallNs() / 1000).toFixed(1)} µs; one Redis PING from this Node process (ioredis, loopback, sequential) ` +
    `${percentile(pings.slice(200), 50).toFixed(0)} µs p50 / ${pingP99Us.toFixed(0)} µs p99`;
  const cores = cpus();
  const cpu = `${cores.length} x ${cores[0]?.model.trim() ?? 'unknown CPU'}`;
  const commit = git('rev-parse', '--short', 'HEAD') || 'unknown';
  const dirty = git('status', '--porcelain').length > 0;
  const url = masked(REDIS_URL);
  return {
    date: new Date().toISOString(),
    commit: `${commit}${dirty ? ' (with uncommitted changes)' : ''}`,
    cpu,
    machine: `${cpu}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${platform()} ${release()}${virtualisation()}, load average at start ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
    node: process.version,
    postgres: await postgresVersion(),
    redis: `${server.get('redis_version') ?? '?'} (${server.get('redis_mode') ?? '?'}, ${server.get('multiplexing_api') ?? '?'}, at ${url.host})`,
    packages: PACKAGES.map((name) => [name, versionOf(name)]),
    command: `REDIS_URL=${url.toString().replace(/\/$/, '')}${process.env.DATABASE_URL ? ` DATABASE_URL=${masked(DATABASE_URL).toString()}` : ''} npm run bench`,
    probes,
    loadAtStart: loadavg()[0] ?? Number.NaN,
    pingP99Us,
  };
}
