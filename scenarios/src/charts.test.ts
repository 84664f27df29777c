import { chargesChart, sideOf, type ChargeBar } from './charts';
import { renderChartInChild } from './cli.test-support';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const BARS: ChargeBar[] = [
  { label: 'naive: no key', charges: 50, side: 'naive' },
  { label: 'ours: one key, duplicates wait', charges: 1, side: 'ours' },
  { label: 'ours: the decline is stored', charges: 0, side: 'ours' },
];

describe('charge charts', () => {
  it('plots exactly the measured counts, in the order given, naive and ours apart', () => {
    const spec = chargesChart('double-click', BARS) as { data: { values: ChargeBar[] }; encoding: { y: { sort: unknown } } };
    expect(spec.data.values).toEqual(BARS);
    expect(spec.encoding.y.sort).toBeNull();
    expect(['naive: plain ledger', 'ours: fenced'].map(sideOf)).toEqual(['naive', 'ours']);
  });

  it('renders as SVG in Node, without a browser, with every variant and its count written out', () => {
    const svg = renderChartInChild('double-click: charges, naive and ours', BARS);
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    const texts = [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
    for (const bar of BARS) {
      expect(texts).toContain(bar.label);
      expect(texts).toContain(String(bar.charges));
    }
    expect(texts).toContain('double-click: charges, naive and ours');
  });
});
