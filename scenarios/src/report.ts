import { sequenceDiagram } from './diagram';
import { runLine, type RunEnvironment } from './environment';
import { attemptsOf, type LabEvent } from './timeline';
import { SETUP, type Policy, type PolicyRun } from './write-up';

/** What the write-up reports for each policy. */
export const EXPECTED_CHARGES: Record<Policy, number> = { none: 4, 'per-attempt': 2, propagated: 1, fingerprint: 1 };

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/** What the caller got on the first press, e.g. `502 on attempt 1, after 1275 ms`. */
export function callerText(run: PolicyRun): string {
  if (!run.caller.answered) return `no answer within ${Math.round(run.caller.durationMs)} ms`;
  return `${run.caller.status} on attempt ${run.caller.attempts}, after ${run.caller.durationMs} ms`;
}

/** What the later press got, and whether it charged again. */
export function laterText(run: PolicyRun): string {
  const press = run.laterPress;
  const how = press.replayed ? `${press.status} from ${press.replayedBy}' store` : `${press.status ?? 'no answer'}`;
  return `${how} in ${press.latencyMs} ms, ${press.chargedAgain ? `charged again (${press.chargesAfter} in all)` : 'not charged'}`;
}

/** The write-up as rows of a terminal table. */
export function table(runs: PolicyRun[]): string {
  const rows = runs.map((run) => [run.policy, String(run.charges), String(EXPECTED_CHARGES[run.policy]), callerText(run), laterText(run)]);
  const header = ['policy', 'charges', 'write-up', 'caller got', 'later press'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] as number)).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** The attempts every hop made during the first press (before the later one). */
function firstPress(run: PolicyRun): LabEvent[] {
  const second = run.events.filter((e) => e.service === 'caller' && e.event === 'attempt')[1];
  return attemptsOf(run.events).filter((a) => (a.startedAt ?? 0) < (second?.startedAt ?? Infinity));
}

/** Why the caller got an error, from the recorded attempts, when it did. */
function whyNoAnswer(run: PolicyRun): string {
  const status = run.caller.status;
  if (status !== undefined && status < 500) return '';
  const attempts = firstPress(run);
  const gaveUp = (service: string) => attempts.filter((a) => a.service === service && a.outcome === 'timeout').length;
  const charged = run.charges === 1 ? 'exactly once' : `${run.charges} times`;
  const later = run.laterPress.replayed
    ? `the later press with the same ${run.policy === 'fingerprint' ? 'body' : 'key'} was answered ${run.laterPress.status} from ${run.laterPress.replayedBy}' store in ${run.laterPress.latencyMs} ms, with no new charge`
    : `the later press was executed again (${run.laterPress.chargesAfter} charges in all)`;
  return [
    '',
    '',
    `**Why the caller saw ${status ?? 'no answer'} although it was charged ${charged}.** Payments wrote the charge at once but holds its answer to a first attempt for ${SETUP.slowFirstAttemptMs / 1000} s,`,
    `and no hop waits that long: orders gave up on payments ${plural(gaveUp('orders'), 'time')} after ${SETUP.ordersTimeoutMs} ms, the gateway gave up on orders ${plural(gaveUp('gateway'), 'time')}`,
    `after ${SETUP.gatewayTimeoutMs} ms, and with no attempt left it answered ${status ?? 'nothing'} (Bad Gateway: the service behind it gave no answer) after ${run.caller.durationMs} ms.`,
    run.policy === 'per-attempt'
      ? 'Each of its attempts carried a fresh key, so each was charged.'
      : `Every retry carried the same ${run.policy === 'fingerprint' ? 'fingerprint' : 'key'} and waited for the one execution instead of charging again, and the outcome was stored when that execution finished.`,
    `A ${status ?? 'missing answer'} from a gateway means "outcome unknown", not "not charged": a client retries it with the same key, and here ${later}.`,
  ].join('\n');
}

/** Why the count is what it is, in words taken from the recorded timeline. */
function explanation(run: PolicyRun): string {
  const attempts = firstPress(run);
  const count = (service: string) => attempts.filter((a) => a.service === service).length;
  const keys = new Set(attempts.filter((a) => a.service === 'orders' && a.keyHash).map((a) => a.keyHash));
  const facts = `The gateway made ${count('gateway')} attempts to orders and orders made ${count('orders')} attempts to payments during the first press.`;
  switch (run.policy) {
    case 'none':
      return `${facts} With no key anywhere, every attempt that reached payments was a new charge: ${run.charges}.`;
    case 'per-attempt':
      return `${facts} The gateway minted a fresh key for each of its attempts, so payments saw ${keys.size} distinct keys. Orders' retry carried the same key as its first attempt and was absorbed, but each gateway attempt was a new intent to payments: ${plural(run.charges, 'charge')}.`;
    case 'propagated':
      return `${facts} Every attempt at every hop carried the caller's key (${keys.size} distinct key at payments), so payments executed once and every later attempt waited for that execution or was answered from the store: ${plural(run.charges, 'charge')}.`;
    case 'fingerprint':
      return `${facts} No key was sent; each hop keyed the request on the SHA-256 of its method, route and body, which are the same on every retry: ${plural(run.charges, 'charge')}; the later press ${run.laterPress.replayed ? 'matched the stored fingerprint and was replayed' : 'was executed again'}.`;
  }
}

/** The write-up's section of RESULTS.md, from this run. */
export function writeUpMarkdown(runs: PolicyRun[], env: RunEnvironment, durationMs: number, chart: string): string {
  const sections = runs.map((run) => {
    const origin = Math.min(...run.events.filter((e) => e.service === 'caller').map((e) => e.startedAt ?? e.time));
    return [
      `### \`${run.policy}\`: ${plural(run.charges, 'charge')}`,
      '',
      explanation(run) + whyNoAnswer(run),
      '',
      `Caller: ${callerText(run)}. Later press: ${laterText(run)}.`,
      '',
      '```mermaid',
      sequenceDiagram(run.events, run.ledger, origin),
      '```',
    ].join('\n');
  });
  return [
    '## The write-up: one slow first attempt, one lost reply',
    '',
    runLine(env, durationMs),
    '',
    `The caller sends one checkout and waits up to ${SETUP.callerBudgetMs / 1000} s. The gateway gives up on orders after ${SETUP.gatewayTimeoutMs} ms and retries once;`,
    `orders gives up on payments after ${SETUP.ordersTimeoutMs} ms and retries once. Payments writes the charge at once but answers a first`,
    `attempt only after ${SETUP.slowFirstAttemptMs / 1000} s, and orders' first reply is lost after its work is done. After everything has settled the`,
    'user presses the button again. Charges are counted in the payments ledger.',
    '',
    `![Charges per policy: ${runs.map((run) => `${run.policy} ${run.charges}`).join(', ')}](${chart})`,
    '',
    '| policy | charges | write-up | caller got | later press |',
    '|---|---|---|---|---|',
    ...runs.map(
      (run) => `| \`${run.policy}\` | **${run.charges}** | ${EXPECTED_CHARGES[run.policy]} | ${callerText(run)} | ${laterText(run)} |`,
    ),
    '',
    ...sections,
  ].join('\n');
}
