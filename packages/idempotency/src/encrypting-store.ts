import type { AnswerEncryption } from './answer-encryption';
import {
  isInspectableStore,
  isTransactionalStore,
  type IdempotencyStore,
  type InspectableStore,
  type StoreTransaction,
  type TransactionalStore,
} from './store';

/**
 * `store`, with every answer encrypted before it is stored: by `complete`,
 * and by the `complete` of a transaction it opens. Everything else, the
 * record's state, owner, epoch, fingerprint and expiry, reaches the store
 * as it is, since the store decides by them. The coordinator decrypts what
 * a claim returns (see `openStoredAnswer`), so a record that cannot be read
 * is its decision, never a store failure.
 */
export function encryptingStore(store: IdempotencyStore, encryption: AnswerEncryption): IdempotencyStore {
  const encrypting: IdempotencyStore = {
    claim: (request) => store.claim(request),
    complete: (recordKey, owner, result, retentionMs) => store.complete(recordKey, owner, encryption.seal(recordKey, result), retentionMs),
    release: (recordKey, owner) => store.release(recordKey, owner),
    renew: (recordKey, owner, leaseMs) => store.renew(recordKey, owner, leaseMs),
    waitForChange: (recordKey, timeoutMs, signal) => store.waitForChange(recordKey, timeoutMs, signal),
    close: () => store.close(),
  };
  // Only what the store has: the coordinator asks whether it can connect, ping or open a transaction.
  if (store.connect) encrypting.connect = () => (store.connect as () => Promise<void>).call(store);
  if (store.ping) encrypting.ping = () => (store.ping as () => Promise<void>).call(store);
  // An operator reads the stored answer as it is kept, and decrypts it with a keyring of its own (`inspectRecord`).
  if (isInspectableStore(store)) {
    (encrypting as InspectableStore).inspect = (recordKey) => store.inspect(recordKey);
    (encrypting as InspectableStore).releaseByOperator = (recordKey, options) => store.releaseByOperator(recordKey, options);
  }
  if (isTransactionalStore(store)) {
    (encrypting as TransactionalStore).begin = async (recordKey, owner) => {
      const transaction = await store.begin(recordKey, owner);
      return {
        handle: transaction.handle,
        complete: (result, retentionMs) => transaction.complete(encryption.seal(recordKey, result), retentionMs),
        rollback: () => transaction.rollback(),
      } satisfies StoreTransaction;
    };
  }
  return encrypting;
}
