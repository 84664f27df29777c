import { setTimeout as sleep } from 'node:timers/promises';
import { currentRequestContext, requestContextFromHeaders, runWithRequestContext } from './request-context';

describe('requestContextFromHeaders', () => {
  const now = 1_000_000;

  it('reads a Structured Field String key or a bare token, and the remaining ms as a deadline', () => {
    expect(requestContextFromHeaders({ 'idempotency-key': '"k-1"', 'request-timeout-ms': '800' }, now)).toEqual({
      key: 'k-1',
      deadline: now + 800,
    });
    expect(requestContextFromHeaders({ 'idempotency-key': 'k-2' }, now)).toEqual({ key: 'k-2' });
  });

  it('binds no key when the inbound key is invalid: the server refuses it, the client must not spread it', () => {
    expect(requestContextFromHeaders({ 'idempotency-key': '' }, now)).toEqual({});
    expect(requestContextFromHeaders({ 'idempotency-key': 'x'.repeat(256) }, now)).toEqual({});
    expect(requestContextFromHeaders({ 'idempotency-key': ['a', 'b'] }, now)).toEqual({});
    expect(requestContextFromHeaders({ 'idempotency-key': '"unterminated' }, now)).toEqual({});
  });

  it('ignores a malformed timeout', () => {
    for (const value of ['-5', '1.5', 'soon', '']) {
      expect(requestContextFromHeaders({ 'request-timeout-ms': value }, now)).toEqual({});
    }
  });

  it('finds headers whatever their case (hand-built message headers)', () => {
    expect(requestContextFromHeaders({ 'Idempotency-Key': 'k', 'Request-Timeout-Ms': '5' }, now)).toEqual({
      key: 'k',
      deadline: now + 5,
    });
  });
});

describe('runWithRequestContext', () => {
  it('is seen after await, in timers and in parallel branches', async () => {
    const seen = await runWithRequestContext({ key: 'k' }, async () => {
      await Promise.resolve();
      const afterTimer = await new Promise<string | undefined>((resolve) => setTimeout(() => resolve(currentRequestContext()?.key), 1));
      const parallel = await Promise.all([1, 2, 3].map(async () => (await sleep(1), currentRequestContext()?.key)));
      return [afterTimer, ...parallel];
    });
    expect(seen).toEqual(['k', 'k', 'k', 'k']);
  });

  it('never leaks out of its function or into another context', async () => {
    const keys = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        runWithRequestContext({ key: `k-${i}` }, async () => {
          await sleep(i % 7);
          return runWithRequestContext({ key: `inner-${i}` }, async () => currentRequestContext()?.key).then((inner) => [
            inner,
            currentRequestContext()?.key,
          ]);
        }),
      ),
    );
    keys.forEach(([inner, outer], i) => expect([inner, outer]).toEqual([`inner-${i}`, `k-${i}`]));
    expect(currentRequestContext()).toBeUndefined();
  });
});
