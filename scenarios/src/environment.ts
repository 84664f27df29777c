import { execSync } from 'node:child_process';

/** Where and when a run ran, for the record. */
export interface RunEnvironment {
  node: string;
  platform: string;
  store: 'redis' | 'memory';
  storeNote: string;
  commit: string;
  date: string;
}

/** The environment of a run starting now on `store`. */
export function environment(store: 'redis' | 'memory', storeNote: string): RunEnvironment {
  let commit = 'unknown';
  try {
    commit = execSync('git rev-parse --short HEAD', { stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    // Not a git checkout: leave it unknown.
  }
  return {
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    store,
    storeNote,
    commit,
    date: new Date().toISOString(),
  };
}

/** The line under a section's title that says which run wrote it. */
export function runLine(env: RunEnvironment, durationMs: number): string {
  return `_Run: Node ${env.node} on ${env.platform}, store **${env.store}** (${env.storeNote}), commit \`${env.commit}\`, ${env.date}; took ${Math.round(durationMs / 1000)} s._`;
}
