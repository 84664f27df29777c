import type { Field } from 'vega-lite/types_unstable/channeldef.js';
import type { LayerSpec } from 'vega-lite/types_unstable/spec/layer.js';
import type { Chart } from './charts';

const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';
const FONT = { font: 'Helvetica, Arial, sans-serif' };

/** One library's figures for one kind of request, from the side-by-side runs. */
export interface LibraryPoint {
  library: string;
  request: string;
  rps: number;
  p99: number;
}

/** A grouped bar chart of one measure per request kind, one bar per library. */
function groupedBars(title: string, field: 'rps' | 'p99', axis: string, libraries: string[], format: string): LayerSpec<Field> {
  return {
    title,
    width: 260,
    height: 220,
    encoding: {
      x: { field: 'request', type: 'nominal', title: null, axis: { labelAngle: 0 }, sort: null },
      xOffset: { field: 'library', type: 'nominal', sort: libraries },
      y: { field, type: 'quantitative', title: axis },
    },
    layer: [
      {
        mark: { type: 'bar' },
        encoding: {
          color: { field: 'library', type: 'nominal', sort: libraries, title: null, legend: { orient: 'bottom', labelLimit: 400 } },
        },
      },
      { mark: { type: 'text', dy: -5, fontSize: 9 }, encoding: { text: { field, type: 'quantitative', format } } },
    ],
  };
}

/** Throughput and p99 of bare, ours and each peer, first executions and replays side by side. */
export function sideBySideChart(points: LibraryPoint[], subtitle: string): Chart {
  const libraries = [...new Set(points.map((p) => p.library))];
  return {
    name: 'side-by-side',
    title: 'Throughput and p99 latency: bare, ours and each peer, first execution and replay',
    spec: {
      $schema: SCHEMA,
      config: FONT,
      title: { text: 'POST /orders under the same load', subtitle },
      data: { values: points },
      hconcat: [
        groupedBars('Throughput (higher is better)', 'rps', 'requests per second', libraries, ',.0f'),
        groupedBars('p99 latency (lower is better)', 'p99', 'ms', libraries, '.1f'),
      ],
      resolve: { scale: { color: 'shared' } },
    },
  };
}

/** One wake-up percentile for a waiter count, woken by the completion signal or by polling. */
export interface WakeupPoint {
  waiters: number;
  wake: string;
  percentile: string;
  ms: number;
}

/** Wake-up delay by waiter count, signal vs polling loop, p50 and p99 (log scale: they differ tenfold). */
export function waiterChart(points: WakeupPoint[], subtitle: string): Chart {
  const wakes = [...new Set(points.map((p) => p.wake))];
  return {
    name: 'waiters',
    title: "Waiter wake-up: completion to each duplicate's answer, pub/sub signal vs polling loop",
    spec: {
      $schema: SCHEMA,
      config: FONT,
      title: { text: 'Wake-up after the first request completes (lower is better)', subtitle },
      data: { values: points },
      facet: { column: { field: 'percentile', type: 'nominal', title: null } },
      spec: {
        width: 220,
        height: 220,
        encoding: {
          x: { field: 'waiters', type: 'ordinal', title: 'waiting duplicates', axis: { labelAngle: 0 } },
          xOffset: { field: 'wake', type: 'nominal', sort: wakes },
          // A log scale has no zero: bars are drawn up from the axis' lowest tick, never stacked.
          y: { field: 'ms', type: 'quantitative', scale: { type: 'log' }, stack: null, title: 'ms (log scale)' },
        },
        layer: [
          { mark: 'bar', encoding: { color: { field: 'wake', type: 'nominal', sort: wakes, title: null, legend: { orient: 'bottom' } } } },
          { mark: { type: 'text', dy: -5, fontSize: 9 }, encoding: { text: { field: 'ms', type: 'quantitative', format: '.1f' } } },
        ],
      },
    },
  };
}
