import { countRoundTrips, type RoundTrips, type Variant } from './endpoint-servers';
import type { LoadResult } from './load';
import { loadInProcessOfItsOwn } from './load-process';
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
      const { loaded, cpuMs } = await loadVariant(variant, round === 0 ? SETTINGS.warmupS : SETTINGS.rewarmS);
      const run: MeasuredRun = { ...loaded, cpuUs: (cpuMs * 1000) / loaded.total };
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
    await loadVariant(variant, 0, SETTINGS.warmupS); // the warm-up
    await variant.server.child.startProfile();
    const { loaded, cpuMs } = await loadVariant(variant, 0);
    const file = await variant.server.child.stopProfile();
    summaries.push({ label: variant.name, summary: summarizeProfile(file, loaded.total, cpuMs) });
  }
  return profileMarkdown(summaries, focus);
}

/**
 * One run of `variant`'s load (after `warmupS` of warm-up) from a load
 * generator process of its own, pinned away from the server's core (see
 * `SETTINGS.loadCpus`), and the server's CPU time over the measured part.
 */
async function loadVariant(
  variant: Variant,
  warmupS: number,
  durationS = SETTINGS.durationS,
): Promise<{ loaded: LoadResult; cpuMs: number }> {
  const { child, url } = variant.server;
  let cpuBefore = Number.NaN;
  let cpuAfter = Number.NaN;
  const loaded = await loadInProcessOfItsOwn(
    { url, connections: SETTINGS.connections, warmupS, durationS, key: variant.loadKey },
    { cpus: SETTINGS.loadCpus, onMeasuring: () => (cpuBefore = child.cpuMs()), onDone: () => (cpuAfter = child.cpuMs()) },
  );
  return { loaded, cpuMs: cpuAfter - cpuBefore };
}
