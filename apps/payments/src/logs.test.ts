import { IdempotencyCoordinator, KEY_HASH_SECRET_ENV, LoggingObserver, MemoryStore } from '@idempotency-chain/idempotency';
import { jsonLogs } from './logs.js';

type RequestSerializer = (req: { method: string; url: string; headers: Record<string, string | undefined> }) => { keyHash?: string };

/** The `keyHash` of payments' request log line for an `Idempotency-Key` header. */
function logLineHash(header: string): string | undefined {
  const serializers = (jsonLogs('payments', 'info').pinoHttp as { serializers: { req: RequestSerializer } }).serializers;
  return serializers.req({ method: 'POST', url: '/charges', headers: { 'idempotency-key': header } }).keyHash;
}

/** The `keyHash` the idempotency observers log for `key`, from a real run. */
async function observerHash(key: string): Promise<string> {
  const lines: Array<Record<string, unknown>> = [];
  const logger = { info: (fields: Record<string, unknown>) => void lines.push(fields), warn: () => undefined };
  const store = new MemoryStore();
  const coordinator = new IdempotencyCoordinator({ service: 'payments', store, observer: new LoggingObserver(logger) });
  await coordinator.run({ operation: 'payments.charge', key, scope: '', fingerprint: 'f' }, async () => 'charged');
  await store.close();
  return lines[0]!.keyHash as string;
}

describe('the request log line', () => {
  const saved = process.env[KEY_HASH_SECRET_ENV];
  afterEach(() => {
    if (saved === undefined) delete process.env[KEY_HASH_SECRET_ENV];
    else process.env[KEY_HASH_SECRET_ENV] = saved;
  });

  it('hashes the key the header carries, quoted or bare, as the observers do: one key, one hash in every log', async () => {
    process.env[KEY_HASH_SECRET_ENV] = 'deployment-a';
    const observed = await observerHash('abc');
    expect(logLineHash('"abc"')).toBe(observed);
    expect(logLineHash('abc')).toBe(observed);
  });

  it('hashes with the deployment secret: another secret, another hash', async () => {
    process.env[KEY_HASH_SECRET_ENV] = 'deployment-a';
    const first = logLineHash('"abc"');
    process.env[KEY_HASH_SECRET_ENV] = 'deployment-b';
    expect(logLineHash('"abc"')).not.toBe(first);
    expect(logLineHash('"abc"')).toBe(await observerHash('abc'));
  });

  it('logs no hash for a header that carries no valid key', () => {
    expect(logLineHash('"unterminated')).toBeUndefined();
  });

  it("logs neither the caller's token nor its API key", () => {
    const serializers = (jsonLogs('payments', 'info').pinoHttp as { serializers: { req: RequestSerializer } }).serializers;
    const line = serializers.req({
      method: 'POST',
      url: '/charges',
      headers: { authorization: 'Bearer secret-token-1', 'x-api-key': 'secret-token-2' },
    });
    expect(JSON.stringify(line)).not.toMatch(/secret-token/);
  });
});
