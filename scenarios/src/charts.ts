import type { TopLevelSpec } from 'vega-lite';

/** One bar: a variant (or a policy) and the charges it measured. */
export interface ChargeBar {
  label: string;
  charges: number;
  /** The naive approach or ours: the bar's colour. */
  side: 'naive' | 'ours';
}

/** Which side a variant is on, from its name (`naive: ...` or `ours: ...`). */
export function sideOf(variant: string): ChargeBar['side'] {
  return variant.startsWith('naive') ? 'naive' : 'ours';
}

/**
 * A horizontal bar chart of the charges each variant measured, naive in
 * red and ours in green, each bar labelled with its count.
 */
export function chargesChart(title: string, bars: ChargeBar[]): TopLevelSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: title, anchor: 'start', fontSize: 13 },
    background: 'white',
    width: 300,
    height: { step: 24 },
    data: { values: bars },
    encoding: {
      y: { field: 'label', type: 'nominal', sort: null, title: null, axis: { labelLimit: 0 } },
      x: { field: 'charges', type: 'quantitative', title: 'charges', axis: { tickMinStep: 1 } },
    },
    layer: [
      {
        mark: { type: 'bar' },
        encoding: {
          color: {
            field: 'side',
            type: 'nominal',
            scale: { domain: ['naive', 'ours'], range: ['#d62728', '#2ca02c'] },
            legend: { title: null, orient: 'bottom' },
          },
        },
      },
      { mark: { type: 'text', align: 'left', dx: 4 }, encoding: { text: { field: 'charges', type: 'quantitative' } } },
    ],
  };
}

/**
 * The chart as SVG, rendered in Node by Vega itself (no browser, no canvas:
 * text is measured by Vega's estimate). Vega and Vega-Lite are ES modules,
 * loaded on first use.
 */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const [vega, vegaLite] = await Promise.all([import('vega'), import('vega-lite')]);
  const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
