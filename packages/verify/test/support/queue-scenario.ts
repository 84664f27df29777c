import type { RunReport } from '../../src/run/report';

/**
 * What a run's report says of one queue scenario at the queue hop `hop`: its verdict,
 * its one intent's effects, the invariants it broke, and each delivery in short
 * (`d2 redelivered acked`, `d3 copy of d1 acked`).
 */
export function queueScenario(report: RunReport, name: string, hop: string) {
  const found = report.scenarios.find((s) => s.name === name);
  const deliveries = found?.attempts.filter((a) => a.hop === hop);
  return {
    error: found?.error,
    notExercised: found?.notExercised,
    passed: found?.passed,
    effects: found?.intents[0]?.effects,
    broken: [...new Set(found?.violations.map((v) => v.invariant))],
    deliveries: deliveries?.map(
      (a) =>
        `d${a.attempt}${a.delivery?.redelivered ? ' redelivered' : ''}${a.duplicateOf ? ` copy of d${a.duplicateOf}` : ''} ${a.outcome}`,
    ),
    /** From JetStream: each delivery's stream sequence and delivery count. */
    sequences: deliveries?.map((a) => a.delivery?.streamSequence),
    counts: deliveries?.map((a) => a.delivery?.deliveryCount),
    keys: deliveries?.map((a) => a.keyHash),
  };
}
