import { ConfigError, loadConfig } from './config';
import { TEST_CREDENTIALS } from './testing';

describe('loadConfig', () => {
  it('gives payments its port, store and the caller it accepts by default', () => {
    expect(loadConfig('payments', TEST_CREDENTIALS)).toMatchObject({
      port: 3002,
      store: 'memory',
      inFlight: 'wait',
      chargeTransport: 'http',
      callers: new Map([[TEST_CREDENTIALS.PAYMENTS_TOKEN, 'orders']]),
    });
  });

  it('uses Redis when REDIS_URL is set', () => {
    expect(loadConfig('payments', { ...TEST_CREDENTIALS, REDIS_URL: 'redis://10.0.0.1:6380' })).toMatchObject({
      store: 'redis',
      redisUrl: 'redis://10.0.0.1:6380',
      ledgerRedisUrl: 'redis://10.0.0.1:6380',
    });
  });

  it.each([
    ['PORT', 'eighty', /PORT="eighty" is not valid: expected an integer from 0 to 65535/],
    ['IDEMPOTENCY_STORE', 'disk', /IDEMPOTENCY_STORE="disk"/],
    ['IN_FLIGHT', 'queue', /IN_FLIGHT="queue"/],
    ['REDIS_URL', 'localhost:6379', /REDIS_URL="localhost:6379" is not valid: expected a URL/],
    ['CHARGE_TRANSPORT', 'smtp', /CHARGE_TRANSPORT="smtp"/],
    ['CHARGE_QUEUE', 'a queue', /CHARGE_QUEUE="a queue"/],
  ])('refuses %s=%s with a message naming it', (name, value, message) => {
    expect(() => loadConfig('payments', { ...TEST_CREDENTIALS, [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig('payments', { ...TEST_CREDENTIALS, [name]: value })).toThrow(message);
  });

  it('refuses to start without PAYMENTS_TOKEN, naming it', () => {
    expect(() => loadConfig('payments', { ...TEST_CREDENTIALS, PAYMENTS_TOKEN: '' })).toThrow(
      new ConfigError('PAYMENTS_TOKEN is not set: expected the service token of this hop'),
    );
  });
});
