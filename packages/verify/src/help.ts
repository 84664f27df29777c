import type { ScenarioName } from './config/schema';

/** One line per scenario family: what `--help` lists. Typed by name, so a new family cannot be left out. */
const SCENARIOS: Record<ScenarioName, string> = {
  'write-up': "the deepest answer held past its caller's timeout, the reply above it lost; every layer retries",
  'lost-reply': "a hop's reply to the first attempt lost after the work was done (one per hop: lost-reply@<hop>)",
  'later-press': 'one press, then the same key again once the chain settled: it must replay',
  'late-press': 'one press, then the same key again retention.minimumMs later: it must still replay',
  'double-click': 'doubleClick.presses presses at once with one key',
  duplicate: "a hop's first attempt delivered twice, the copy while the original is in its service (duplicate@<hop>)",
  'retry-while-running': "a hop's first attempt held until its caller's retry arrives, then both sent (retry-while-running@<hop>)",
  'key-reuse': 'a settled key sent again with one body field or query parameter changed, each in turn: each refused',
  'no-key': 'a press without a key, sent once; the deepest reply lost',
  reset: 'the first attempt at a hop reset before the hop sees it (one per hop: reset@<hop>)',
  unavailable: "a hop's first attempt answered 503 by its proxy, never forwarded (one per hop: unavailable@<hop>)",
  kill: 'the deepest service killed after its effect and started again (needs a service on the deepest hop)',
  'two-callers': 'two callers send one key, each its own intent (needs entry.callers)',
  'lost-ack': "the queue consumer's ack of the first delivery cut off before the broker; it redelivers (needs queue)",
  'duplicate-delivery': 'the first delivered message published again while the consumer holds it and after its ack (needs queue)',
  'kill-before-ack': 'the queue consumer killed after its effect, before its ack reaches the broker (needs queue.service)',
};

/** The short usage, shown under a command-line error. */
export const USAGE = 'usage: idempotency-verify run <chain.yaml> [--scenario <name>]... [--report-dir <dir>]';

/** What `--help` prints: the commands, the options, the scenarios and the exit codes. */
export function helpText(): string {
  const width = Math.max(...Object.keys(SCENARIOS).map((name) => name.length));
  return `${USAGE}

Verifies that each intent takes effect once across a chain of HTTP services, with a
fault proxy in front of each hop.

Commands:
  run <chain.yaml>          start the proxies, run the scenarios, write the reports

Options:
  -s, --scenario <name>     run only this scenario: a family (lost-reply) or one
                            instance (lost-reply@payments); repeatable
  --report-dir <dir>        where report.json, junit.xml and report.md go
                            (default idempotency-verify-report)
  -h, --help                this text

Scenarios:
${Object.entries(SCENARIOS)
  .map(([name, line]) => `  ${name.padEnd(width)}  ${line}`)
  .join('\n')}

Exit codes: 0 every invariant held, 1 an invariant broke, 2 the config or the command
line is wrong, or nothing could be tested.`;
}
