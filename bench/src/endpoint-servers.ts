import { join } from 'node:path';
import { freshKeys, load, type LoadResult } from './load';
import { spawnNode, type NodeChild } from './processes';
import { profileMarkdown, summarizeProfile, type ProfileSummary } from './profile';
import { REDIS_URL } from './redis-tools';
import { SETTINGS } from './settings';

export type Mode = 'bare' | 'ours' | 'peer';

/** One `fixtures/endpoint-server` child. */
export interface EndpointServer {
  mode: Mode;
  url: string;
  child: NodeChild;
  /** Redis commands it has sent (by name) and requests its handler ran. */
  stats(): Promise<{ handled: number; commands: Record<string, number> }>;
}

export async function startServer(mode: Mode, prefix: string): Promise<EndpointServer> {
  const script = join(__dirname, 'fixtures', 'endpoint-server.js');
  const { child, match } = await spawnNode(`endpoint-${mode}`, script, {
    env: { BENCH_MODE: mode, BENCH_PREFIX: prefix, REDIS_URL, PORT: '0', NODE_ENV: 'production' },
    readyLine: /^READY (\d+)$/,
  });
  const url = `http://127.0.0.1:${match?.[1]}`;
  return {
    mode,
    url,
    child,
    stats: async () => (await (await fetch(`${url}/bench/stats`)).json()) as { handled: number; commands: Record<string, number> },
  };
}

/** A way of loading a server: which server, which keys. */
export interface Variant {
  name: string;
  server: EndpointServer;
  key: () => string;
  /** Run once before the first measurement (e.g. store the result a replay returns). */
  seed?: () => Promise<void>;
}

/** A fixed key, stored by one request before the replays start. */
export function replayVariant(name: string, server: EndpointServer, key: string): Variant {
  return {
    name,
    server,
    key: () => key,
    seed: async () => {
      const response = await fetch(`${server.url}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ orderId: 'order-bench', amountCents: 500 }),
      });
      if (response.status !== 201) throw new Error(`${name}: seeding the replay key answered ${response.status}`);
    },
  };
}

export function freshVariant(name: string, server: EndpointServer, keyPrefix: string): Variant {
  return { name, server, key: freshKeys(keyPrefix) };
}

/** One measured run, with the server's CPU time per request (kernel-counted, µs). */
export type MeasuredRun = LoadResult & { cpuUs: number };

export interface VariantRuns {
  runs: MeasuredRun[];
  /** Redis commands per request, measured over every run. */
  commandsPerRequest: number;
  commandNames: Record<string, number>;
}

const totalOf = (commands: Record<string, number>) => Object.values(commands).reduce((a, b) => a + b, 0);

/**
 * `SETTINGS.httpRuns` rounds; each round runs every variant once (warm-up, then
 * the measured run), in an order rotated per round so that no variant always
 * follows the same neighbour on a noisy machine.
 */
export async function measureInterleaved(variants: Variant[], log: (line: string) => void): Promise<Map<string, VariantRuns>> {
  for (const variant of variants) await variant.seed?.();
  const results = new Map<string, VariantRuns>(variants.map((v) => [v.name, { runs: [], commandsPerRequest: 0, commandNames: {} }]));
  const requests = new Map<string, number>();
  const commands = new Map<string, Record<string, number>>();
  for (let round = 0; round < SETTINGS.httpRuns; round++) {
    const order = variants.map((_, i) => variants[(i + round) % variants.length] as Variant);
    for (const variant of order) {
      const { url } = variant.server;
      const warmupS = round === 0 ? SETTINGS.warmupS : SETTINGS.rewarmS;
      await load({ url, connections: SETTINGS.connections, durationS: warmupS, key: variant.key });
      const before = await variant.server.stats();
      const cpuBefore = variant.server.child.cpuMs();
      const loaded = await load({ url, connections: SETTINGS.connections, durationS: SETTINGS.durationS, key: variant.key });
      const result: MeasuredRun = { ...loaded, cpuUs: ((variant.server.child.cpuMs() - cpuBefore) * 1000) / loaded.total };
      const after = await variant.server.stats();
      if (result.failures > 0) throw new Error(`${variant.name}: ${result.failures} failed responses (${JSON.stringify(result.statusCodes)})`);
      const entry = results.get(variant.name)!;
      entry.runs.push(result);
      requests.set(variant.name, (requests.get(variant.name) ?? 0) + result.total);
      const delta = commands.get(variant.name) ?? {};
      for (const [name, n] of Object.entries(after.commands)) delta[name] = (delta[name] ?? 0) + n - (before.commands[name] ?? 0);
      commands.set(variant.name, delta);
      log(`  round ${round + 1}/${SETTINGS.httpRuns} ${variant.name.padEnd(24)} ${Math.round(result.rps).toString().padStart(6)} req/s  p50 ${result.p50.toFixed(2)} ms  p99 ${result.p99.toFixed(2)} ms  server CPU ${Math.round(result.cpuUs)} µs/req`);
    }
  }
  for (const [name, entry] of results) {
    entry.commandNames = commands.get(name) ?? {};
    entry.commandsPerRequest = totalOf(entry.commandNames) / (requests.get(name) ?? 1);
  }
  return results;
}

/** Profile each variant's server under its own load; Markdown comparing them. */
export async function profileVariants(variants: Variant[], focus: string, log: (line: string) => void): Promise<string> {
  const summaries: Array<{ label: string; summary: ProfileSummary }> = [];
  for (const variant of variants) {
    log(`  profiling ${variant.name} (${SETTINGS.durationS} s under load)`);
    const { url } = variant.server;
    await load({ url, connections: SETTINGS.connections, durationS: SETTINGS.warmupS, key: variant.key });
    await variant.server.child.startProfile();
    const cpuBefore = variant.server.child.cpuMs();
    const result = await load({ url, connections: SETTINGS.connections, durationS: SETTINGS.durationS, key: variant.key });
    const cpuMs = variant.server.child.cpuMs() - cpuBefore;
    const file = await variant.server.child.stopProfile();
    summaries.push({ label: variant.name, summary: summarizeProfile(file, result.total, cpuMs) });
  }
  return profileMarkdown(summaries, focus);
}
