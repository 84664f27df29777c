import { ConfigError, loadConfig } from './config';
import { TEST_CREDENTIALS } from './testing';

describe('loadConfig', () => {
  it('gives each service its port, next hop and timeout by default', () => {
    expect(loadConfig('gateway', TEST_CREDENTIALS)).toMatchObject({
      port: 3000,
      downstreamUrl: 'http://127.0.0.1:3001',
      attemptTimeoutMs: 600,
      maxAttempts: 2,
      store: 'memory',
      inFlight: 'wait',
    });
    expect(loadConfig('orders', TEST_CREDENTIALS)).toMatchObject({
      port: 3001,
      downstreamUrl: 'http://127.0.0.1:3002',
      attemptTimeoutMs: 300,
    });
    expect(loadConfig('payments', TEST_CREDENTIALS).downstreamUrl).toBeUndefined();
  });

  it('uses Redis when REDIS_URL is set', () => {
    expect(loadConfig('payments', { ...TEST_CREDENTIALS, REDIS_URL: 'redis://10.0.0.1:6380' })).toMatchObject({
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
    expect(() => loadConfig('gateway', { ...TEST_CREDENTIALS, [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig('gateway', { ...TEST_CREDENTIALS, [name]: value })).toThrow(message);
  });

  it.each([
    ['gateway', 'GATEWAY_API_KEYS'],
    ['gateway', 'ORDERS_TOKEN'],
    ['orders', 'ORDERS_TOKEN'],
    ['orders', 'PAYMENTS_TOKEN'],
    ['payments', 'PAYMENTS_TOKEN'],
  ] as const)('refuses to start %s without %s, naming it', (service, name) => {
    expect(() => loadConfig(service, { ...TEST_CREDENTIALS, [name]: '' })).toThrow(
      new ConfigError(
        `${name} is not set: ${name === 'GATEWAY_API_KEYS' ? 'expected a JSON object of token to principal, {"<token>":"acct-7"}' : 'expected the service token of this hop'}`,
      ),
    );
  });

  it('gives each service the callers it accepts and the token it presents to its next hop', () => {
    expect(loadConfig('gateway', TEST_CREDENTIALS)).toMatchObject({ downstreamToken: TEST_CREDENTIALS.ORDERS_TOKEN });
    expect(loadConfig('orders', TEST_CREDENTIALS)).toMatchObject({
      callers: new Map([[TEST_CREDENTIALS.ORDERS_TOKEN, 'gateway']]),
      downstreamToken: TEST_CREDENTIALS.PAYMENTS_TOKEN,
    });
    expect(loadConfig('payments', TEST_CREDENTIALS).callers).toEqual(new Map([[TEST_CREDENTIALS.PAYMENTS_TOKEN, 'orders']]));
  });

  it('refuses a token a hop accepts that is also the one it presents next: its holder could skip the hop', () => {
    const customerKey = 'c'.repeat(32);
    const gateway = { ...TEST_CREDENTIALS, GATEWAY_API_KEYS: JSON.stringify({ [customerKey]: 'acct-7' }), ORDERS_TOKEN: customerKey };
    expect(() => loadConfig('gateway', gateway)).toThrow(
      new ConfigError("ORDERS_TOKEN is also a customer's key in GATEWAY_API_KEYS: give each hop a token of its own"),
    );
    const orders = { ...TEST_CREDENTIALS, PAYMENTS_TOKEN: TEST_CREDENTIALS.ORDERS_TOKEN };
    expect(() => loadConfig('orders', orders)).toThrow(
      new ConfigError('PAYMENTS_TOKEN is the same as ORDERS_TOKEN: give each hop a token of its own'),
    );
  });
});
