import { execSync } from 'node:child_process';
import { sequenceDiagram } from './diagram';
import { attemptsOf } from './timeline';
import type { Policy, PolicyRun } from './write-up';

/** What the write-up reports for each policy. */
export const EXPECTED_CHARGES: Record<Policy, number> = { none: 4, 'per-attempt': 2, propagated: 1, fingerprint: 1 };

/** The run's environment, for the record. */
export function environment(store: string, storeNote: string) {
  let commit = 'unknown';
  try {
    commit = execSync('git rev-parse --short HEAD', { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
  } catch {
    // Not a git checkout: leave it unknown.
  }
  return { node: process.version, store, storeNote, date: new Date().toISOString(), commit, platform: `${process.platform} ${process.arch}` };
}

function callerText(run: PolicyRun): string {
  if (!run.caller.answered) return `no answer within ${Math.round(run.caller.durationMs)} ms`;
  return `${run.caller.status} on attempt ${run.caller.attempts}, after ${run.caller.durationMs} ms`;
}

function laterText(run: PolicyRun): string {
  const press = run.laterPress;
  const how = press.replayed ? `${press.status} from ${press.replayedBy}'s store` : `${press.status ?? 'no answer'}`;
  return `${how} in ${press.latencyMs} ms, ${press.chargedAgain ? `charged again (${press.chargesAfter} in all)` : 'not charged'}`;
}

/** The terminal table. */
export function table(runs: PolicyRun[]): string {
  const rows = runs.map((run) => [run.policy, String(run.charges), String(EXPECTED_CHARGES[run.policy]), callerText(run), laterText(run)]);
  const header = ['policy', 'charges', 'write-up', 'caller got', 'later press'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] as number)).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** Why the count is what it is, in words taken from the recorded timeline. */
export function explanation(run: PolicyRun): string {
  const attempts = attemptsOf(run.events);
  const count = (service: string) => attempts.filter((a) => a.service === service && a.startedAt! < firstPressEnd(run)).length;
  const keys = new Set(attempts.filter((a) => a.service === 'orders' && a.keyHash).map((a) => a.keyHash));
  const facts = `The gateway made ${count('gateway')} attempts to orders and orders made ${count('orders')} attempts to payments during the first press.`;
  switch (run.policy) {
    case 'none':
      return `${facts} With no key anywhere, every attempt that reached payments was a new charge: ${run.charges}.`;
    case 'per-attempt':
      return `${facts} The gateway minted a fresh key for each of its attempts, so payments saw ${keys.size} distinct keys. Orders' retry carried the same key as its first attempt and was absorbed, but each gateway attempt was a new intent to payments: ${run.charges} charges.`;
    case 'propagated':
      return `${facts} Every attempt at every hop carried the caller's key (${keys.size} distinct key at payments), so payments executed once and every later attempt waited for that execution or was answered from the store: ${run.charges} charge. The retries waited on the slow first attempt; the caller ${run.caller.answered ? `got ${run.caller.status}` : 'got no answer'} within its ${Math.round(run.caller.durationMs)} ms, and the later press was ${run.laterPress.replayed ? 'answered from the stored result' : 'executed again'}.`;
    case 'fingerprint':
      return `${facts} No key was sent; each hop keyed the request on the SHA-256 of its method, route and body, which are the same on every retry: ${run.charges} charge${run.charges === 1 ? '' : 's'}; the later press ${run.laterPress.replayed ? 'matched the stored fingerprint and was replayed' : 'was executed again'}.`;
  }
}

function firstPressEnd(run: PolicyRun): number {
  const callerAttempts = run.events.filter((e) => e.service === 'caller' && e.event === 'attempt');
  const second = callerAttempts[1];
  return second?.startedAt ?? Infinity;
}

/** RESULTS.md, from this run only. */
export function resultsMarkdown(runs: PolicyRun[], env: ReturnType<typeof environment>): string {
  const sections = runs.map((run) => {
    const origin = Math.min(...run.events.filter((e) => e.service === 'caller').map((e) => e.startedAt ?? e.time));
    return [
      `### \`${run.policy}\`: ${run.charges} charge${run.charges === 1 ? '' : 's'}`,
      '',
      explanation(run),
      '',
      `Caller: ${callerText(run)}. Later press: ${laterText(run)}.`,
      '',
      '```mermaid',
      sequenceDiagram(run.events, run.ledger, origin),
      '```',
    ].join('\n');
  });
  return [
    '# Results',
    '',
    'Written by `npm run scenarios` (`turbo run scenarios`); do not edit by hand.',
    '',
    `Node ${env.node} on ${env.platform}, store **${env.store}** (${env.storeNote}), commit \`${env.commit}\`, ${env.date}.`,
    '',
    '## The write-up: one slow first attempt, one lost reply',
    '',
    'The caller sends one checkout and waits up to 3 s. The gateway gives up on orders after 600 ms and retries once;',
    'orders gives up on payments after 300 ms and retries once. Payments writes the charge at once but answers a first',
    "attempt only after 1.5 s, and orders' first reply is lost after its work is done. After everything has settled the",
    'user presses the button again. Charges are counted in the payments ledger.',
    '',
    '| policy | charges | write-up | caller got | later press |',
    '|---|---|---|---|---|',
    ...runs.map((run) => `| \`${run.policy}\` | **${run.charges}** | ${EXPECTED_CHARGES[run.policy]} | ${callerText(run)} | ${laterText(run)} |`),
    '',
    ...sections,
    '',
  ].join('\n');
}
