import { countRoundTrips, type RoundTrips, type Variant } from './endpoint-servers';
import { load } from './load';
import { Measured, type MeasuredRun } from './measured';
import { profileMarkdown, summarizeProfile, type ProfileSummary } from './profile';
import { SETTINGS } from './settings';

/**
 * `SETTINGS.httpRuns` rounds; each round runs every variant once (warm-up, then
 * the measured run), in an order rotated per round so that no variant always
 * follows the same neighbour on a noisy machine. Then the Redis commands of
 * each variant's requests, counted over sequential requests.
 */
export async function measureInterleaved(variants: Variant[], log: (line: string) => void): Promise<Measured> {
  for (const variant of variants) await variant.seed?.();
  const runs = new Map<string, MeasuredRun[]>(variants.map((v) => [v.name, []]));
  for (let round = 0; round < SETTINGS.httpRuns; round++) {
    const order = variants.map((_, i) => variants[(i + round) % variants.length] as Variant);
    for (const variant of order) {
      const { url } = variant.server;
      const warmupS = round === 0 ? SETTINGS.warmupS : SETTINGS.rewarmS;
      await load({ url, connections: SETTINGS.connections, durationS: warmupS, key: variant.key });
      const cpuBefore = variant.server.child.cpuMs();
      const loaded = await load({ url, connections: SETTINGS.connections, durationS: SETTINGS.durationS, key: variant.key });
      const run: MeasuredRun = { ...loaded, cpuUs: ((variant.server.child.cpuMs() - cpuBefore) * 1000) / loaded.total };
      if (run.failures > 0) throw new Error(`${variant.name}: ${run.failures} failed responses (${JSON.stringify(run.statusCodes)})`);
      runs.get(variant.name)!.push(run);
      log(
        `  round ${round + 1}/${SETTINGS.httpRuns} ${variant.name.padEnd(36)} ${Math.round(run.rps).toString().padStart(6)} req/s  p50 ${run.p50.toFixed(2)} ms  p99 ${run.p99.toFixed(2)} ms  server CPU ${Math.round(run.cpuUs)} µs/req`,
      );
    }
  }
  const trips = new Map<string, RoundTrips>();
  for (const variant of variants) trips.set(variant.name, await countRoundTrips(variant, SETTINGS.roundTripSample));
  return new Measured(new Map(variants.map((v) => [v.name, { runs: runs.get(v.name)!, roundTrips: trips.get(v.name)! }])));
}

/** Profile each variant's server under its own load; Markdown comparing them (the first is the baseline). */
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
