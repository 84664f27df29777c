import type { RunReport } from '../run/report';
import { failureText } from './failure';

/** The run as JUnit XML: one test case per scenario, so CI shows each one by name. */
export function junitReport(run: RunReport): string {
  const failures = run.scenarios.filter((s) => !s.passed).length;
  const cases = run.scenarios.map((s) => {
    const open = `    <testcase classname="idempotency-verify" name="${xml(s.name)}" time="${seconds(s.durationMs)}"`;
    if (s.passed) return `${open}/>`;
    const first = s.error ?? s.violations[0]?.message ?? 'failed';
    return `${open}>\n      <failure message="${xml(first)}">${xml(failureText(s))}</failure>\n    </testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="idempotency-verify" tests="${run.scenarios.length}" failures="${failures}" time="${seconds(run.durationMs)}">`,
    `  <testsuite name="${xml(run.config)}" tests="${run.scenarios.length}" failures="${failures}" time="${seconds(run.durationMs)}" timestamp="${run.startedAt}">`,
    ...cases,
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
