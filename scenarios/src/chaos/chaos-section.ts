import { existsSync, readFileSync } from 'node:fs';
import { chartLink, type OutputPaths } from '../output-paths';
import { section } from '../results-document';
import { CHAOS } from '../selection';
import type { ChaosFile, ChaosRecord } from './chaos-record';
import { FAULT_KINDS } from './fault-schedule';

const STORE_TITLE = {
  redis: 'All three services on Redis',
  postgres: 'Payments on PostgreSQL (transactional completion), gateway and orders on Redis',
} as const;

/** The chart of one store's soak. */
export function chaosChartId(store: ChaosRecord['store']): string {
  return `chaos-${store}`;
}

const number = (n: number) => n.toLocaleString('en-US');

function invariantRow(name: string, value: number): string {
  return `| **${name}** | **${value}**${value === 0 ? '' : ' (broken)'} |`;
}

/** One store's soak: its figures in a table, then its timeline. */
function runMarkdown(run: ChaosRecord): string {
  const answers = Object.entries(run.answers)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([answer, count]) => `${answer}: ${number(count)}`)
    .join(', ');
  const env = run.environment;
  return [
    `### ${STORE_TITLE[run.store]}${run.naive || run.keyPolicy ? ` — naive: ${[run.naive && `LAB_NAIVE=${run.naive}`, run.keyPolicy && `KEY_POLICY=${run.keyPolicy}`].filter(Boolean).join(' ')}` : ''}`,
    '',
    `_Run: Node ${env.node} on ${env.platform}, commit \`${env.commit}\`, ${env.date}; took ${run.tookSeconds} s._`,
    '',
    '| | |',
    '|---|---|',
    `| seed | ${run.seed} (replay: \`CHAOS_SEED=${run.seed} npm run chaos\`) |`,
    `| soak, then settle | ${run.durationSeconds} s, then ${run.settleSeconds} s |`,
    `| checkouts | ${number(run.checkouts)} (${number(run.duplicates)} sent by two callers at once): ${number(run.calls)} calls, ${number(run.attempts)} attempts |`,
    `| paid during the soak, under the faults | ${number(run.paidDuringSoak ?? 0)} of ${number(run.checkouts)} (the others in the settle phase) |`,
    `| what each call ended with | ${answers} |`,
    `| faults injected (${run.faultsPlannedPerKind} planned per kind) | ${FAULT_KINDS.map((kind) => `${kind} ${run.faults[kind]}`).join(' · ')} |`,
    `| payments executions that lost their lease | ${run.leaseLost} |`,
    `| restarts by the supervisor | ${
      Object.entries(run.restarts)
        .map(([service, count]) => `${service} ${count}`)
        .join(', ') || 'none'
    } |`,
    invariantRow('double charges', run.doubleCharges),
    invariantRow('lost charges', run.lostCharges),
    invariantRow('unsettled', run.unsettled),
    invariantRow('mismatched replays', run.mismatchedReplays),
    '',
    `![The soak on ${run.store}: faults against the callers' answers](${chartLink(chaosChartId(run.store))})`,
  ].join('\n');
}

/** The soak's section of RESULTS.md, from chaos.json alone. */
function chaosMarkdown(file: ChaosFile): string {
  return [
    '## Randomized fault soak',
    '',
    'Written by `npm run chaos`. Users press Pay for fresh orders (each with its own `Idempotency-Key`, some twice at once)',
    'and retry with that key, with jittered backoff, until they get a final answer; meanwhile a schedule drawn from the',
    "seed kills and stops orders and payments, drops and delays replies at every hop, kills and pauses the services'",
    'Redis (durable: `appendfsync always`) and freezes payments past its lease just before the charge. Then the faults',
    "stop, every intent without a final answer is retried with its key, and the checker reads every intent's ledger",
    'lines: none may be charged twice, none told it paid without a charge, none left unsettled, and every 2xx must be',
    "the ledger's charge. In the picture, each fault is a mark on its row as long as it lasted; below, what the",
    "callers' attempts got, second by second. With over twenty faults of each kind in a hundred seconds, one strikes",
    'about every 0.6 s and a restarted service takes a second or two to boot: the chain is down for most of the soak,',
    'and most intents are paid in the settle phase, by a retry with the key that every fault before it had a go at.',
    '',
    ...file.runs.flatMap((run) => [runMarkdown(run), '']),
  ]
    .join('\n')
    .trimEnd();
}

/** The chaos.json under `paths`, when there is one. */
export function readChaosFile(paths: OutputPaths): ChaosFile | undefined {
  if (!existsSync(paths.chaos)) return undefined;
  const parsed = JSON.parse(readFileSync(paths.chaos, 'utf8')) as Partial<ChaosFile>;
  return Array.isArray(parsed.runs) ? (parsed as ChaosFile) : undefined;
}

/** Put the soak's section, drawn from chaos.json, into `sections` (as the document's writers both do). */
export function putChaosSection(sections: Map<string, string>, paths: OutputPaths): void {
  const file = readChaosFile(paths);
  if (file) sections.set(CHAOS, section(CHAOS, chaosMarkdown(file)));
}
