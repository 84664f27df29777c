import { join, relative, resolve } from 'node:path';

/** The repository's root, from src or dist alike. */
export const REPO_ROOT = resolve(__dirname, '../..');

/** The charts' folder, relative to the root: also the prefix of their links in RESULTS.md. */
const CHARTS_DIR = 'scenarios/charts';

/** Where a run writes, under a root laid out like the repository. */
export interface OutputPaths {
  root: string;
  /** The write-up for people. */
  markdown: string;
  /** The same figures for machines. */
  results: string;
  /** The last soak's figures (`npm run chaos`). */
  chaos: string;
  /** One SVG chart per section. */
  charts: string;
}

/**
 * The files a run writes under `root` (the repository unless a run is told
 * otherwise, as tests do): the same layout everywhere, so the relative links
 * in RESULTS.md hold wherever it is written.
 */
export function outputPaths(root = REPO_ROOT): OutputPaths {
  return {
    root,
    markdown: join(root, 'RESULTS.md'),
    results: join(root, 'scenarios', 'results.json'),
    chaos: join(root, 'scenarios', 'chaos.json'),
    charts: join(root, CHARTS_DIR),
  };
}

/** The link to a section's chart, relative to RESULTS.md. */
export function chartLink(id: string): string {
  return `${CHARTS_DIR}/${id}.svg`;
}

/** A path relative to where the command runs when it is below it, absolute otherwise. */
export function shownPath(file: string): string {
  const path = relative(process.cwd(), file);
  return path.startsWith('..') ? file : path;
}
