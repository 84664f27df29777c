import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TopLevelSpec } from 'vega-lite';

/** Where a full run writes its charts, next to BENCHMARKS.md's sources (`bench/charts`). */
export const CHART_DIR = join(__dirname, '..', 'charts');

/** A chart of a section, drawn from the figures the run measured. */
export interface Chart {
  /** File name without extension: `bench/charts/<name>.svg`. */
  name: string;
  /** Alt text and caption. */
  title: string;
  spec: TopLevelSpec;
}

/**
 * Render a Vega-Lite spec to SVG with Vega's headless view: no browser, no
 * canvas (text widths are estimated). Vega ships as ES modules only, hence
 * the dynamic imports from this CommonJS build.
 */
async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const [vega, vegaLite] = await Promise.all([import('vega'), import('vega-lite')]);
  const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** Render every chart; resolves with each one's SVG, by name. */
export async function renderCharts(charts: Chart[]): Promise<Map<string, string>> {
  const rendered = new Map<string, string>();
  for (const chart of charts) rendered.set(chart.name, await renderSvg(chart.spec));
  return rendered;
}

/** Replace the charts of an earlier run with these; resolves with the files written. */
export function writeCharts(rendered: Map<string, string>, dir = CHART_DIR): string[] {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return [...rendered].map(([name, svg]) => {
    const file = join(dir, `${name}.svg`);
    writeFileSync(file, svg);
    return file;
  });
}
