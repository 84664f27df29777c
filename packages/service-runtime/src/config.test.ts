import { ConfigError, loadConfig } from './config';

describe('loadConfig', () => {
  it('gives each service its port, next hop and timeout by default', () => {
    expect(loadConfig('gateway', {})).toMatchObject({
      port: 3000,
      downstreamUrl: 'http://127.0.0.1:3001',
      attemptTimeoutMs: 600,
      maxAttempts: 2,
      store: 'memory',
      inFlight: 'wait',
    });
    expect(loadConfig('orders', {})).toMatchObject({ port: 3001, downstreamUrl: 'http://127.0.0.1:3002', attemptTimeoutMs: 300 });
    expect(loadConfig('payments', {}).downstreamUrl).toBeUndefined();
  });

  it('uses Redis when REDIS_URL is set', () => {
    expect(loadConfig('payments', { REDIS_URL: 'redis://10.0.0.1:6380' })).toMatchObject({
      store: 'redis',
      redisUrl: 'redis://10.0.0.1:6380',
    });
  });

  it.each([
    ['PORT', 'eighty', /PORT="eighty" is not valid: expected an integer from 0 to 65535/],
    ['IDEMPOTENCY_STORE', 'disk', /IDEMPOTENCY_STORE="disk"/],
    ['IN_FLIGHT', 'queue', /IN_FLIGHT="queue"/],
    ['REDIS_URL', 'localhost:6379', /REDIS_URL="localhost:6379" is not valid: expected a URL/],
    ['ORDERS_URL', 'ftp://x', /ORDERS_URL="ftp:\/\/x"/],
    ['DOWNSTREAM_TIMEOUT_MS', '0', /DOWNSTREAM_TIMEOUT_MS="0"/],
  ])('refuses %s=%s with a message naming it', (name, value, message) => {
    expect(() => loadConfig('gateway', { [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig('gateway', { [name]: value })).toThrow(message);
  });
});
