import type { RunReport } from '../run/report';
import { deliveriesOf, deliveryLine } from './delivery';
import { failureText } from './failure';

/** The run as JUnit XML: one test case per scenario, so CI shows each one by name. */
export function junitReport(run: RunReport): string {
  const failures = run.scenarios.filter((s) => !s.passed).length;
  const open = (name: string, ms: number) => `    <testcase classname="idempotency-verify" name="${xml(name)}" time="${seconds(ms)}"`;
  const cases = run.scenarios.map((s) => {
    // A queue hop's deliveries go with every case, passed or not, as the terminal shows them.
    const deliveries = deliveriesOf(s.attempts).map(deliveryLine);
    const out = deliveries.length === 0 ? '' : `\n      <system-out>${xml(deliveries.join('\n'))}</system-out>`;
    if (s.passed) return out === '' ? `${open(s.name, s.durationMs)}/>` : `${open(s.name, s.durationMs)}>${out}\n    </testcase>`;
    const first = s.error ?? s.notExercised?.[0] ?? s.violations[0]?.message ?? 'failed';
    return `${open(s.name, s.durationMs)}>\n      <failure message="${xml(first)}">${xml(failureText(s))}</failure>${out}\n    </testcase>`;
  });
  const skips = run.skipped.map((s) => `${open(s.name, 0)}>\n      <skipped message="${xml(`because ${s.reason}`)}"/>\n    </testcase>`);
  const tests = run.scenarios.length + run.skipped.length;
  const counts = `tests="${tests}" failures="${failures}" skipped="${run.skipped.length}" time="${seconds(run.durationMs)}"`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="idempotency-verify" ${counts}>`,
    `  <testsuite name="${xml(run.config)}" ${counts} timestamp="${run.startedAt}">`,
    ...cases,
    ...skips,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

function xml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
