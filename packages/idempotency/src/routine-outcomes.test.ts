import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { IdempotencyCoordinator, type RunRequest } from './coordinator';
import { IdempotencyChannel } from './diagnostics-channels';
import { hashKey } from './key-hash';
import { MemoryStore } from './memory-store';
import type { IdempotencyEvent, IdempotencyObserver } from './observer';
import { ROUTINE_KEY_HASH_UNREAD, ROUTINE_OUTCOMES } from './routine-outcomes';

const KEY = 'order-7-attempt';
const request = (fingerprint = 'fp-1'): RunRequest => ({ operation: 'payments.charge', key: KEY, fingerprint });
const ok = async () => ({ statusCode: 201 });

/** Runs a first execution, its replay, and a reuse of its key for another request (422), as `observer` hears them. */
async function heard(observer: IdempotencyObserver & { events: IdempotencyEvent[] }): Promise<Array<[string, string]>> {
  const coordinator = new IdempotencyCoordinator({ service: 'payments', store: new MemoryStore(), observer });
  await coordinator.run(request(), ok);
  await coordinator.run(request(), ok);
  await expect(coordinator.run(request('fp-2'), ok)).rejects.toMatchObject({ name: 'KeyReusedError' });
  return observer.events.map((event) => [event.outcome, event.keyHash]);
}

const recorder = (marked: boolean) => {
  const events: IdempotencyEvent[] = [];
  return { events, record: (event: IdempotencyEvent) => void events.push(event), ...(marked && { [ROUTINE_KEY_HASH_UNREAD]: true }) };
};

describe('key hashes of routine events', () => {
  it('are not computed for an observer that never reads them; every other event is hashed', async () => {
    expect(await heard(recorder(true))).toEqual([
      ['executed', ''],
      ['replayed', ''],
      ['mismatched', hashKey(KEY)],
    ]);
  });

  it('are computed for any other observer', async () => {
    expect(await heard(recorder(false))).toEqual([
      ['executed', hashKey(KEY)],
      ['replayed', hashKey(KEY)],
      ['mismatched', hashKey(KEY)],
    ]);
  });

  it('are computed whenever someone listens on the outcome channel, which hears the same event', async () => {
    const published: IdempotencyEvent[] = [];
    const listen = (message: unknown) => void published.push(message as IdempotencyEvent);
    subscribe(IdempotencyChannel.Outcome, listen);
    try {
      expect((await heard(recorder(true))).map(([, keyHash]) => keyHash)).toEqual([hashKey(KEY), hashKey(KEY), hashKey(KEY)]);
      expect(published.map((event) => event.keyHash)).toEqual([hashKey(KEY), hashKey(KEY), hashKey(KEY)]);
    } finally {
      unsubscribe(IdempotencyChannel.Outcome, listen);
    }
  });

  it('cover only outcomes every request may have, never one to alert on', () => {
    expect([...ROUTINE_OUTCOMES].sort()).toEqual(['executed', 'rejected_in_flight', 'released', 'replayed', 'waited']);
  });
});
