import { constants } from 'node:os';
import { resolve } from 'node:path';
import { environment } from '../environment';
import { outputPaths, shownPath } from '../output-paths';
import { privateRedisUnavailable } from '@idempotency-chain/local-processes';
import { chaosRecord, recordHolds, type ChaosRecord } from './chaos-record';
import { CHAOS_STORES, runChaos, type ChaosRunOutcome, type ChaosStore } from './chaos-run';
import { offenders } from './checker';
import { intentHistory } from './intent-history';
import { chaosSeed, InvalidChaosSettingError } from './seeded-random';
import { writeChaos } from './write-chaos';

/** A soak of this long per store keeps the whole default run under 5 minutes on a 2-core machine. */
const DEFAULT_SECONDS = 100;

const USAGE = `usage: npm run chaos [-- --out DIR]
  CHAOS_SEED=n       replay the fault schedule of seed n (default: a fresh random seed, printed)
  CHAOS_SECONDS=s    soak this long per store (default ${DEFAULT_SECONDS})
  CHAOS_STORES=a,b   redis, postgres or both (default both)
  --out DIR          write RESULTS.md, scenarios/chaos.json and the charts under DIR instead of the repository`;

/** Offending intents printed in full: enough to see the pattern. */
const HISTORIES_SHOWN = 5;

/** What the environment asks for, or why it cannot be run. */
function settingsFrom(env: NodeJS.ProcessEnv): { seed: number; seconds: number; stores: ChaosStore[] } {
  const seconds = env.CHAOS_SECONDS ? Number(env.CHAOS_SECONDS) : DEFAULT_SECONDS;
  if (!Number.isFinite(seconds) || seconds < 5 || seconds > 3600)
    throw new InvalidChaosSettingError(`CHAOS_SECONDS=${env.CHAOS_SECONDS} is not valid: expected 5 to 3600`);
  const stores = (env.CHAOS_STORES || CHAOS_STORES.join(',')).split(',').map((store) => store.trim());
  const unknown = stores.filter((store) => !CHAOS_STORES.includes(store as ChaosStore));
  if (unknown.length > 0 || stores.length === 0)
    throw new InvalidChaosSettingError(`CHAOS_STORES=${env.CHAOS_STORES} is not valid: expected a list of ${CHAOS_STORES.join(', ')}`);
  return { seed: chaosSeed(env.CHAOS_SEED), seconds, stores: stores as ChaosStore[] };
}

function table(records: ChaosRecord[]): string {
  const rows = records.map((r) =>
    [
      r.store,
      r.seed,
      `${r.durationSeconds}+${r.settleSeconds} s`,
      r.checkouts,
      Object.values(r.faults).join('/'),
      r.doubleCharges,
      r.lostCharges,
      r.unsettled,
      r.mismatchedReplays,
    ].join('\t'),
  );
  return [
    'store\tseed\tsoak+settle\tcheckouts\tfaults (kill/term/lostReply/slowFirstAttempt/redisRestart/redisPause/leaseExpiry)\tdouble\tlost\tunsettled\tmismatched',
    ...rows,
  ].join('\n');
}

/** The seed and the offending intents' full histories of a soak that broke an invariant. */
function failureReport(outcome: ChaosRunOutcome): string {
  const ids = offenders(outcome.verdict);
  const { history, settings } = outcome;
  return [
    `INVARIANT BROKEN on ${settings.store}, seed ${settings.seed}: replay with CHAOS_SEED=${settings.seed} CHAOS_SECONDS=${Math.round(settings.durationMs / 1000)} CHAOS_STORES=${settings.store}`,
    `  double charges: ${outcome.verdict.doubleCharges.length}, lost charges: ${outcome.verdict.lostCharges.length}, unsettled: ${outcome.verdict.unsettled.length}, mismatched replays: ${outcome.verdict.mismatchedReplays.length}`,
    `  ${ids.length} intent(s); the first ${Math.min(ids.length, HISTORIES_SHOWN)} in full:`,
    ...ids.slice(0, HISTORIES_SHOWN).map((id) => intentHistory(history, history.intents[id]!)),
  ].join('\n');
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const outAt = args.indexOf('--out');
  if (args.some((arg, i) => arg !== '--out' && i !== outAt + 1) || (outAt >= 0 && !args[outAt + 1])) {
    process.stderr.write(`${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  let settings;
  try {
    settings = settingsFrom(process.env);
  } catch (error) {
    if (!(error instanceof InvalidChaosSettingError)) throw error;
    process.stderr.write(`${error.message}\nnothing run, nothing written\n`);
    process.exitCode = 2;
    return;
  }
  const missing = privateRedisUnavailable();
  if (missing) {
    process.stderr.write(`npm run chaos needs a redis-server of its own to kill and pause: ${missing}\n`);
    process.exitCode = 1;
    return;
  }
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\nstopped by ${signal}: nothing written (seed ${settings.seed}); the lab and its Redis are being killed\n`);
      process.exit(128 + constants.signals[signal]);
    });
  }
  const paths = outputPaths(outAt >= 0 ? resolve(args[outAt + 1] as string) : undefined);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const naive = {
    ...(process.env.LAB_NAIVE && { naive: process.env.LAB_NAIVE }),
    ...(process.env.KEY_POLICY && process.env.KEY_POLICY !== 'propagated' && { keyPolicy: process.env.KEY_POLICY }),
  };
  log(
    `chaos: seed ${settings.seed}, ${settings.seconds} s per store on ${settings.stores.join(' and ')}${naive.naive || naive.keyPolicy ? ` (naive: ${JSON.stringify(naive)})` : ''}`,
  );
  const outcomes: ChaosRunOutcome[] = [];
  for (const store of settings.stores) {
    outcomes.push(
      await runChaos({
        seed: settings.seed,
        store,
        durationMs: settings.seconds * 1000,
        databaseUrl: process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
        log,
      }),
    );
  }
  const { store: _store, storeNote: _note, ...machine } = environment('redis', '');
  const records = outcomes.map((outcome) => chaosRecord(outcome, machine, naive));
  const files = await writeChaos(outcomes, records, paths);
  process.stdout.write(`\n${table(records)}\n\nseed ${settings.seed}; wrote\n${files.map((file) => `  ${shownPath(file)}`).join('\n')}\n`);
  const broken = outcomes.filter((outcome) => !recordHolds(records[outcomes.indexOf(outcome)]!));
  if (broken.length > 0) {
    process.stderr.write(`\n${broken.map(failureReport).join('\n\n')}\n`);
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  // Exit now, so the 'exit' hook kills whatever the failed run left running.
  process.exit(1);
});
