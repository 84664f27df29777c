import { from, lastValueFrom, toArray } from 'rxjs';
import { IdempotencyCoordinator } from '../../coordinator';
import { MemoryStore } from '../../memory-store';
import { heldStream, type StreamEnd } from './rpc-stream';

describe('a held stream of values', () => {
  const values = ['first', 'a second value', { third: 3 }, null];
  /** What its record stores, as the record stores it. */
  const recordBytes = Buffer.byteLength(JSON.stringify({ values }));

  /** The stream run through `heldStream` under `maxBytes`: how it ended, and what its caller got. */
  async function held(maxBytes: number): Promise<{ end: StreamEnd | undefined; sent: unknown[] }> {
    const coordinator = new IdempotencyCoordinator({ service: 'payments', store: new MemoryStore() });
    const { execution } = await coordinator.begin({ operation: 'rpc.stream', key: `held-${maxBytes}`, fingerprint: 'f' });
    let end: StreamEnd | undefined;
    const stream = heldStream(
      from(values),
      execution!,
      { maxBytes },
      {
        completed: async (ended) => void (end = ended),
        failed: async (error) => Promise.reject(error),
        abandoned: () => {},
      },
    );
    const sent = await lastValueFrom(stream.pipe(toArray()));
    await execution!.release();
    return { end, sent };
  }

  it('holds a stream whose record takes exactly maxBytes, and sends one a byte larger as it comes, unheld', async () => {
    expect(await held(recordBytes)).toEqual({ end: { values, last: null }, sent: values });
    expect(await held(recordBytes - 1)).toEqual({ end: { values: undefined, last: null }, sent: values });
  });
});
