import { currentExecution, runInExecution, trackCurrentExecution } from './current-execution';
import type { Execution } from './execution';

// Tracking is per process (each test file loads its own copy of this module), and stays on once asked for.
describe('currentExecution', () => {
  const execution = { epoch: 7 } as Execution;

  it('throws while tracking is off, rather than answer undefined and turn fencing off unseen', () => {
    expect(() => runInExecution(execution, () => currentExecution())).toThrow(/currentExecution\(\) is off: .*trackCurrentExecution/);
  });

  it('once tracking is on, is the execution for everything the function awaits, and undefined outside', async () => {
    trackCurrentExecution();
    const seen = await runInExecution(execution, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return currentExecution();
    });
    expect(seen).toBe(execution);
    expect(currentExecution()).toBeUndefined();
  });
});
