import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sideBySideChart, waiterChart, type LibraryPoint, type WakeupPoint } from './chart-specs';
import { renderCharts, writeCharts } from './charts';

const libraries: LibraryPoint[] = ['first execution', 'replay'].flatMap((request) => [
  { library: 'bare (no idempotency)', request, rps: 9123, p99: 14.2 },
  { library: 'ours', request, rps: 7456, p99: 16.3 },
  { library: 'node-idempotency', request, rps: 5789, p99: 21.7 },
  { library: 'Powertools', request, rps: 5012, p99: 23.9 },
]);
const wakeups: WakeupPoint[] = [1, 10, 100].flatMap((waiters) =>
  ['pub/sub signal', '50 ms polling loop'].flatMap((wake) =>
    ['p50', 'p99'].map((percentile) => ({ waiters, wake, percentile, ms: wake === 'pub/sub signal' ? 0.8 * waiters : 27.5 })),
  ),
);

describe('charts', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'bench-charts-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('the side-by-side chart draws every library, both kinds of request and their figures', async () => {
    const svg = (await renderCharts([sideBySideChart(libraries, '32 connections')])).get('side-by-side') ?? '';
    expect(svg.startsWith('<svg')).toBe(true);
    for (const text of [
      'bare (no idempotency)',
      'ours',
      'node-idempotency',
      'Powertools',
      'first execution',
      'replay',
      '9,123',
      '5,012',
      '23.9',
      '32 connections',
    ]) {
      expect(svg).toContain(text);
    }
  });

  test('the waiter chart draws signal and polling for every waiter count, on a log scale', async () => {
    const svg = (await renderCharts([waiterChart(wakeups, 'medians of 3 runs')])).get('waiters') ?? '';
    for (const text of ['pub/sub signal', '50 ms polling loop', 'p50', 'p99', '100', '80.0', '27.5', 'ms (log scale)'])
      expect(svg).toContain(text);
  });

  test('writing replaces the charts of an earlier run', () => {
    writeFileSync(join(dir, 'stale.svg'), '<svg/>');
    const files = writeCharts(new Map([['side-by-side', '<svg>new</svg>']]), dir);
    expect(files).toEqual([join(dir, 'side-by-side.svg')]);
    expect(readdirSync(dir)).toEqual(['side-by-side.svg']);
    expect(readFileSync(files[0]!, 'utf8')).toBe('<svg>new</svg>');
  });
});
