import type { TopLevelSpec } from 'vega-lite';
import { FAULT_KINDS } from './fault-schedule';
import type { History } from './history';

/** What an attempt of a caller ended with, as the chart colours it. */
const ANSWER_CLASSES = ['2xx', '2xx replayed', '409 in flight', '5xx', 'no answer'] as const;
const ANSWER_COLOURS = ['#2ca02c', '#98df8a', '#ff7f0e', '#d62728', '#7f7f7f'];
/** A fault shorter than this is drawn this long, so that it shows. */
const MIN_FAULT_SECONDS = 0.25;

function answerClass(attempt: { outcome: string; status?: number; replayed?: boolean }): (typeof ANSWER_CLASSES)[number] {
  if (attempt.status === undefined) return 'no answer';
  if (attempt.status < 300) return attempt.replayed ? '2xx replayed' : '2xx';
  if (attempt.status === 409) return '409 in flight';
  return '5xx';
}

/**
 * The soak as one picture: on top, each fault as a mark on its kind's row,
 * as long as it lasted; below, the callers' attempts per second, by what they
 * got, on the same time axis: where the answers turn red and grey, a fault
 * is above.
 */
export function timelineChart(title: string, history: History): TopLevelSpec {
  const seconds = (time: number) => (time - history.startedAt) / 1000;
  const faults = history.faults.map((fault) => ({
    kind: fault.kind,
    from: seconds(fault.at),
    to: seconds(fault.at) + Math.max((fault.ms ?? 0) / 1000, MIN_FAULT_SECONDS),
  }));
  const bins = new Map<string, { second: number; answer: string; attempts: number }>();
  for (const attempt of history.attempts) {
    const second = Math.floor(seconds(attempt.startedAt + attempt.durationMs));
    const answer = answerClass(attempt);
    const bin = bins.get(`${second}|${answer}`) ?? { second, answer, attempts: 0 };
    bin.attempts += 1;
    bins.set(`${second}|${answer}`, bin);
  }
  const end = Math.max(1, ...[...bins.values()].map((bin) => bin.second + 1), ...faults.map((fault) => fault.to));
  const x = { scale: { domain: [0, Math.ceil(end)] }, title: 'seconds since the soak started' };
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: title, anchor: 'start', fontSize: 13 },
    background: 'white',
    // Two colour scales, one per panel: the faults' kinds and the answers.
    resolve: { scale: { color: 'independent' }, legend: { color: 'independent' } },
    vconcat: [
      {
        width: 720,
        height: { step: 14 },
        data: { values: faults },
        mark: { type: 'bar', height: 10 },
        encoding: {
          y: { field: 'kind', type: 'nominal', sort: [...FAULT_KINDS], scale: { domain: [...FAULT_KINDS] }, title: 'fault' },
          x: { field: 'from', type: 'quantitative', ...x, axis: { title: null } },
          x2: { field: 'to' },
          color: { field: 'kind', type: 'nominal', scale: { domain: [...FAULT_KINDS], scheme: 'dark2' }, legend: null },
        },
      },
      {
        width: 720,
        height: 160,
        data: { values: [...bins.values()] },
        mark: { type: 'bar' },
        encoding: {
          x: { field: 'second', type: 'quantitative', bin: { step: 1 }, ...x },
          y: { field: 'attempts', type: 'quantitative', aggregate: 'sum', title: 'caller attempts per second' },
          color: {
            field: 'answer',
            type: 'nominal',
            scale: { domain: [...ANSWER_CLASSES], range: ANSWER_COLOURS },
            legend: { title: null, orient: 'bottom' },
          },
        },
      },
    ],
  };
}
