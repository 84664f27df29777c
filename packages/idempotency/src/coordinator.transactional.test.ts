import { IdempotencyCoordinator } from './coordinator';
import { isIdempotencyError, LeaseLostError, StoreUnavailableError } from './errors';
import { MemoryStore } from './memory-store';
import type { StoreTransaction, TransactionalStore } from './store';

/**
 * The coordinator's side of transactional completion, against a MemoryStore
 * that logs what a transactional store is asked to do. PostgresStore's own
 * tests show the same flow committing and rolling back for real.
 */
class LoggingTransactionalStore extends MemoryStore implements TransactionalStore<{ id: string }> {
  readonly log: string[] = [];
  failBegin = false;
  completeAnswer: boolean | Error = true;

  async begin(recordKey: string, owner: string): Promise<StoreTransaction<{ id: string }>> {
    this.log.push('begin');
    if (this.failBegin) throw new Error('connection refused');
    return {
      handle: { id: 'tx-1' },
      complete: async (result, retentionMs) => {
        this.log.push('tx.complete');
        if (this.completeAnswer instanceof Error) throw this.completeAnswer;
        if (!this.completeAnswer) return false;
        return super.complete(recordKey, owner, result, retentionMs);
      },
      rollback: async () => void this.log.push('tx.rollback'),
    };
  }

  override async complete(recordKey: string, owner: string, result: string, retentionMs: number): Promise<boolean> {
    this.log.push('complete');
    return super.complete(recordKey, owner, result, retentionMs);
  }

  override async release(recordKey: string, owner: string): Promise<boolean> {
    this.log.push('release');
    return super.release(recordKey, owner);
  }
}

const request = (key = `k-${Math.random()}`) => ({ operation: 'charge', key, fingerprint: 'fp' });

describe('IdempotencyCoordinator with transactional completion', () => {
  let store: LoggingTransactionalStore;
  let coordinator: IdempotencyCoordinator;
  beforeEach(() => {
    store = new LoggingTransactionalStore();
    coordinator = new IdempotencyCoordinator({ service: 's', store, defaults: { transactional: true } });
  });
  afterEach(() => store.close());

  it('hands the action the transaction and completes inside it, not through store.complete', async () => {
    const seen: unknown[] = [];
    const result = await coordinator.run(request(), async ({ transaction }) => {
      seen.push(transaction);
      store.log.push('action');
      return { statusCode: 201 };
    });
    expect(result).toMatchObject({ replayed: false, value: { statusCode: 201 } });
    expect(seen).toEqual([{ id: 'tx-1' }]);
    expect(store.log).toEqual(['begin', 'action', 'tx.complete']);
  });

  it('rolls back, then releases, when the action throws or its result is not final', async () => {
    await expect(coordinator.run(request(), async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await coordinator.run(request(), async () => ({ statusCode: 503 }))).toMatchObject({ value: { statusCode: 503 } });
    expect(store.log).toEqual(['begin', 'tx.rollback', 'release', 'begin', 'tx.rollback', 'release']);
  });

  it('answers LeaseLostError when the completion’s owner check fails (the store rolled back)', async () => {
    store.completeAnswer = false;
    const error = await coordinator.run(request(), async () => ({ statusCode: 201 })).catch((e: unknown) => e);
    expect(isIdempotencyError(error, LeaseLostError)).toBe(true);
    expect(store.log).toEqual(['begin', 'tx.complete']);
  });

  it('answers StoreUnavailableError, without releasing, when the commit fails (outcome unknown)', async () => {
    store.completeAnswer = new Error('connection terminated');
    const error = await coordinator.run(request(), async () => ({ statusCode: 201 })).catch((e: unknown) => e);
    expect(isIdempotencyError(error, StoreUnavailableError)).toBe(true);
    expect(store.log).toEqual(['begin', 'tx.complete']);
  });

  it('does not run the action when the transaction cannot be opened, and releases the claim', async () => {
    store.failBegin = true;
    let ran = false;
    const error = await coordinator.run(request(), async () => (ran = true)).catch((e: unknown) => e);
    expect(isIdempotencyError(error, StoreUnavailableError)).toBe(true);
    expect(ran).toBe(false);
    expect(store.log).toEqual(['begin', 'release']);
  });

  it('leaves operations without `transactional` on the ordinary path', async () => {
    const plain = new IdempotencyCoordinator({ service: 's', store });
    const result = await plain.run(request(), async ({ transaction }) => ({ statusCode: 201, transaction }));
    expect(result.value).toEqual({ statusCode: 201, transaction: undefined });
    expect(store.log).toEqual(['complete']);
  });

  it('refuses a transactional operation on a store without transactional completion, before any claim', async () => {
    const memory = new MemoryStore();
    const refused = new IdempotencyCoordinator({ service: 's', store: memory, operations: { charge: { transactional: true } } });
    await expect(refused.run(request(), async () => ({ statusCode: 201 }))).rejects.toThrow(TypeError);
    expect(memory.size).toBe(0);
    await memory.close();
  });
});
