import { createHash } from 'node:crypto';
import { formatIdempotencyKey } from './key';
import { hashKey, headerKeyHash, KEY_HASH_SECRET_ENV } from './key-hash';

describe('hashKey', () => {
  const saved = process.env[KEY_HASH_SECRET_ENV];
  afterEach(() => {
    if (saved === undefined) delete process.env[KEY_HASH_SECRET_ENV];
    else process.env[KEY_HASH_SECRET_ENV] = saved;
  });

  it('is 12 hex characters, stable, and not the key', () => {
    const key = 'abcdef012345';
    expect(hashKey(key)).toMatch(/^[0-9a-f]{12}$/);
    expect(hashKey(key)).toBe(hashKey(key));
    expect(hashKey(key)).not.toBe(key);
    expect(hashKey(key)).not.toBe(hashKey('abcdef012346'));
  });

  it('is keyed: another secret, another hash, and never the bare SHA-256 anyone can compute from a guessed key', () => {
    expect(hashKey('order-1001', 'secret-a')).not.toBe(hashKey('order-1001', 'secret-b'));
    expect(hashKey('order-1001', 'secret-a')).not.toBe(createHash('sha256').update('order-1001').digest('hex').slice(0, 12));
    expect(hashKey('order-1001')).not.toBe(createHash('sha256').update('order-1001').digest('hex').slice(0, 12));
  });

  it('takes the deployment secret from the environment, so replicas hash a key alike', () => {
    process.env[KEY_HASH_SECRET_ENV] = 'deployment-secret';
    expect(hashKey('order-1001')).toBe(hashKey('order-1001', 'deployment-secret'));
  });
});

describe('headerKeyHash', () => {
  it("hashes the key a header carries, as hashKey hashes the key, not the header's quotes", () => {
    expect(headerKeyHash(formatIdempotencyKey('order-1001'))).toBe(hashKey('order-1001'));
    expect(headerKeyHash(formatIdempotencyKey('order-1001'))).not.toBe(hashKey('"order-1001"'));
  });

  it('has no hash for no header, nor for one that carries no valid key', () => {
    expect(headerKeyHash(undefined)).toBeUndefined();
    expect(headerKeyHash('')).toBeUndefined();
    expect(headerKeyHash('"unterminated')).toBeUndefined();
  });
});
