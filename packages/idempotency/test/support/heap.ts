import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Bytes of heap that `fill` leaves retained: the heap's size after it,
 * minus before, each taken after a full garbage collection (the `gc` that
 * `--expose-gc` gives, turned on here so any test runner will do). What
 * `fill` keeps must stay reachable from outside it, or it is collected too.
 */
export async function retainedBytes(fill: () => unknown): Promise<number> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  const before = process.memoryUsage().heapUsed;
  await fill();
  gc();
  return process.memoryUsage().heapUsed - before;
}
