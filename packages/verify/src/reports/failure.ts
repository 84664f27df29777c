import type { Attempt } from '../proxy/attempt';
import type { ScenarioReport } from '../run/report';
import { deliveryLine } from './delivery';

/** One line per attempt: hop, attempt number, key hash, faults, status and outcome; a queue delivery as {@link deliveryLine}. */
function attemptLine(a: Attempt): string {
  if (a.delivery) return deliveryLine(a);
  const copy = a.duplicateOf === undefined ? '' : ` (copy of a${a.duplicateOf})`;
  const faults = a.faults.length > 0 ? ` [${a.faults.join(', ')}]` : '';
  return `${a.hop} a${a.attempt}${copy} ${a.method} ${a.path} k=${a.keyHash ?? 'none'}${faults} -> ${a.status ?? '-'} ${a.outcome}`;
}

/**
 * What a failed scenario says: the scenario, each broken invariant with its intent
 * and counts, and every attempt the proxies saw — enough to see why without a rerun.
 */
export function failureText(report: ScenarioReport): string {
  const lines = [`scenario ${report.name}: ${report.description}`];
  if (report.error) lines.push(`  could not finish: ${report.error}`);
  for (const fault of report.notExercised ?? []) lines.push(`  not exercised: ${fault}`);
  for (const v of report.violations) {
    const intent = report.intents.find((i) => i.intentId === v.intentId);
    lines.push(`  ${v.invariant} broken for intent ${v.intentId} (key ${intent?.keyHash ?? 'none'}): ${v.message}`);
  }
  for (const intent of report.intents) {
    lines.push(`  intent ${intent.intentId}: effects ${intent.effects} (expected ${intent.expected})`);
  }
  lines.push('  attempts the proxies saw:');
  for (const a of report.attempts) lines.push(`    ${attemptLine(a)}`);
  return lines.join('\n');
}
