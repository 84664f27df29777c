import type { ChildProcess } from 'node:child_process';

const live = new Set<ChildProcess>();
let installed = false;

/**
 * Kill every child still running when this process exits, whatever the
 * reason (the end of the run, an uncaught error, `process.exit` from a
 * signal handler): a lab service or a Redis the runner started never
 * outlives the runner. The `exit` event allows only synchronous work, and
 * `kill` is synchronous.
 */
export function track(child: ChildProcess): ChildProcess {
  if (!installed) {
    installed = true;
    process.on('exit', () => {
      for (const running of live) running.kill('SIGKILL');
    });
  }
  live.add(child);
  const forget = () => live.delete(child);
  child.once('exit', forget);
  child.once('error', forget);
  return child;
}
